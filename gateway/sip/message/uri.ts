import { isHostname, isIpv6Reference, parseDigits } from './chars.js';
import { SipParseError } from './errors.js';

/**
 * URIs of RFC 3261 sec. 19.1 (sip/sips), RFC 3966 (tel) and anything else as an opaque
 * absoluteURI (RFC 3261 sec. 25.1), so that unknown schemes parse and the UA layer can answer
 * 416 (RFC 3261 sec. 8.2.2.1). Components are %-decoded once, never recursively (RFC 3986 2.4).
 */
export interface SipUri {
  readonly scheme: 'sip' | 'sips';
  readonly user: string | undefined;
  readonly password: string | undefined;
  readonly host: string;
  readonly port: number | undefined;
  /** uri-parameters, names lower-cased and decoded; `null` for a parameter without value. */
  readonly params: ReadonlyMap<string, string | null>;
  readonly headers: readonly (readonly [string, string])[];
  /** The text as received; serializers send this unchanged. */
  readonly raw: string;
}

export interface TelUri {
  readonly scheme: 'tel';
  readonly number: string;
  readonly params: ReadonlyMap<string, string | null>;
  readonly raw: string;
}

export interface AbsoluteUri {
  readonly scheme: string;
  readonly opaque: string;
  readonly raw: string;
}

export type Uri = SipUri | TelUri | AbsoluteUri;

export const isSipUri = (u: Uri): u is SipUri => u.scheme === 'sip' || u.scheme === 'sips';
export const isTelUri = (u: Uri): u is TelUri => u.scheme === 'tel';

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 65 && c <= 70) return c - 55;
  if (c >= 97 && c <= 102) return c - 87;
  return -1;
}

/** Decodes %HH escapes to UTF-8 text; a `%` not followed by two hex digits stays literal. */
export function percentDecode(s: string): string {
  if (s.indexOf('%') < 0) return s;
  const src = Buffer.from(s, 'utf8');
  const out = Buffer.allocUnsafe(src.length);
  let n = 0;
  for (let i = 0; i < src.length; i++) {
    const c = src[i] ?? 0;
    if (c === 37 && i + 2 < src.length) {
      const hi = hexValue(src[i + 1] ?? 0);
      const lo = hexValue(src[i + 2] ?? 0);
      if (hi >= 0 && lo >= 0) {
        out[n++] = hi * 16 + lo;
        i += 2;
        continue;
      }
    }
    out[n++] = c;
  }
  return out.toString('utf8', 0, n);
}

/** Characters allowed unescaped in a user part (RFC 3261: unreserved / user-unreserved). */
const USER_SAFE = /^[A-Za-z0-9\-_.!~*'()&=+$,;?/]*$/;

export function percentEncodeUser(s: string): string {
  if (USER_SAFE.test(s)) return s;
  let out = '';
  for (const b of Buffer.from(s, 'utf8')) {
    const ch = String.fromCharCode(b);
    out += b < 128 && USER_SAFE.test(ch) ? ch : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Whitespace, controls and the delimiters `<`, `>`, `"` never appear in a URI (RFC 3986 2.2). */
function hasForbiddenUriChar(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c <= 32 || c === 127 || c === 34 || c === 60 || c === 62) return true;
  }
  return false;
}

function schemeEnd(raw: string): number {
  const colon = raw.indexOf(':');
  if (colon <= 0) throw new SipParseError(`not a URI: ${raw.slice(0, 40)}`);
  for (let i = 0; i < colon; i++) {
    const c = raw.charCodeAt(i);
    const alpha = (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
    if (!(alpha || (i > 0 && ((c >= 48 && c <= 57) || c === 43 || c === 45 || c === 46)))) {
      throw new SipParseError(`bad URI scheme in ${raw.slice(0, 40)}`);
    }
  }
  return colon;
}

export function parseUri(raw: string): Uri {
  if (raw.length === 0 || hasForbiddenUriChar(raw)) {
    throw new SipParseError(`malformed URI: ${raw.slice(0, 60)}`);
  }
  const colon = schemeEnd(raw);
  const scheme = raw.slice(0, colon).toLowerCase();
  if (scheme === 'sip' || scheme === 'sips') return parseSipUri(raw, scheme, colon + 1);
  if (scheme === 'tel') return parseTelUri(raw, colon + 1);
  const opaque = raw.slice(colon + 1);
  if (opaque.length === 0) throw new SipParseError(`empty ${scheme} URI`);
  return { scheme, opaque, raw };
}

function parseUriParams(raw: string, from: number, to: number, into: Map<string, string | null>): void {
  if (from >= to) return;
  for (const part of raw.slice(from, to).split(';')) {
    if (part.length === 0) throw new SipParseError('empty URI parameter');
    const eq = part.indexOf('=');
    const name = percentDecode(eq < 0 ? part : part.slice(0, eq)).toLowerCase();
    if (name.length === 0) throw new SipParseError('empty URI parameter name');
    into.set(name, eq < 0 ? null : percentDecode(part.slice(eq + 1)));
  }
}

function parseSipUri(raw: string, scheme: 'sip' | 'sips', start: number): SipUri {
  let user: string | undefined;
  let password: string | undefined;
  let i = start;
  // RFC 3261 sec. 19.1.1: '@' never appears unescaped after the userinfo, so the first one ends it
  // (the user part itself may hold ';', '?' and ':' - RFC 4475 sec. 3.1.1.2 and 3.1.1.9).
  const at = raw.indexOf('@', start);
  if (at >= 0) {
    const userinfo = raw.slice(start, at);
    const pw = userinfo.indexOf(':');
    const userText = pw < 0 ? userinfo : userinfo.slice(0, pw);
    if (userText.length === 0) throw new SipParseError('empty user part in SIP URI');
    user = percentDecode(userText);
    if (pw >= 0) password = percentDecode(userinfo.slice(pw + 1));
    i = at + 1;
  }
  let host: string;
  if (raw.charCodeAt(i) === 91) {
    const close = raw.indexOf(']', i);
    if (close < 0) throw new SipParseError('unterminated IPv6 reference');
    host = raw.slice(i, close + 1);
    if (!isIpv6Reference(host)) throw new SipParseError(`bad IPv6 reference ${host}`);
    i = close + 1;
  } else {
    const hostStart = i;
    while (i < raw.length) {
      const c = raw.charCodeAt(i);
      if (c === 58 || c === 59 || c === 63) break;
      i++;
    }
    host = raw.slice(hostStart, i);
    if (!isHostname(host)) throw new SipParseError(`bad host in SIP URI: ${host.slice(0, 60)}`);
  }
  let port: number | undefined;
  if (raw.charCodeAt(i) === 58) {
    const portStart = ++i;
    while (i < raw.length && raw.charCodeAt(i) >= 48 && raw.charCodeAt(i) <= 57) i++;
    port = parseDigits(raw.slice(portStart, i), 5);
    if (port === undefined || port > 65535) throw new SipParseError('bad port in SIP URI');
  }
  const params = new Map<string, string | null>();
  const headers: [string, string][] = [];
  const q = raw.indexOf('?', i);
  const paramsEnd = q < 0 ? raw.length : q;
  if (i < paramsEnd) {
    if (raw.charCodeAt(i) !== 59) throw new SipParseError(`unexpected text after host in ${raw.slice(0, 60)}`);
    parseUriParams(raw, i + 1, paramsEnd, params);
  }
  if (q >= 0) {
    for (const part of raw.slice(q + 1).split('&')) {
      const eq = part.indexOf('=');
      if (eq <= 0) throw new SipParseError('malformed URI header');
      headers.push([percentDecode(part.slice(0, eq)), percentDecode(part.slice(eq + 1))]);
    }
  }
  return { scheme, user, password, host, port, params, headers, raw };
}

function parseTelUri(raw: string, start: number): TelUri {
  const semi = raw.indexOf(';', start);
  const number = raw.slice(start, semi < 0 ? raw.length : semi);
  if (number.length === 0 || !/^\+?[0-9A-Fa-f*#\-.()]+$/.test(number)) {
    throw new SipParseError(`bad telephone number in ${raw.slice(0, 60)}`);
  }
  const params = new Map<string, string | null>();
  if (semi >= 0) parseUriParams(raw, semi + 1, raw.length, params);
  return { scheme: 'tel', number, params, raw };
}

export interface SipUriParts {
  scheme?: 'sip' | 'sips';
  user?: string;
  host: string;
  port?: number;
  params?: Record<string, string | null>;
}

/** Builds a SIP URI, escaping the user part as RFC 3261 sec. 19.1.2 requires. */
export function formatSipUri(p: SipUriParts): string {
  let out = `${p.scheme ?? 'sip'}:`;
  if (p.user !== undefined) out += `${percentEncodeUser(p.user)}@`;
  out += p.host.includes(':') && !p.host.startsWith('[') ? `[${p.host}]` : p.host;
  if (p.port !== undefined) out += `:${p.port}`;
  for (const [k, v] of Object.entries(p.params ?? {})) out += v === null ? `;${k}` : `;${k}=${v}`;
  return out;
}
