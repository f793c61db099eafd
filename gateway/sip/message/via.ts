import { isHostname, isIpv6Reference, isTokenChar, parseDigits, skipWsp, trimWsp } from './chars.js';
import { SipParseError } from './errors.js';
import { splitList, type Headers } from './headers.js';
import { Params, parseParamsAt } from './params.js';

/** One via-parm (RFC 3261 sec. 20.42, 25.1; rport RFC 3581). */
export interface Via {
  /** `SIP/2.0`, with any LWS removed. */
  readonly protocol: string;
  /** Upper-cased transport (UDP, TCP, TLS, SCTP, WS, WSS, or an extension). */
  readonly transport: string;
  readonly host: string;
  readonly port: number | undefined;
  readonly params: Params;
  readonly branch: string | undefined;
  readonly received: string | undefined;
  /** `true` when present without value (a request asking for it), a number once filled in. */
  readonly rport: number | true | undefined;
  readonly maddr: string | undefined;
  readonly ttl: number | undefined;
}

/** RFC 3261 sec. 8.1.1.7: branches starting with this cookie are RFC 3261 transaction ids. */
export const MAGIC_COOKIE = 'z9hG4bK';

function readToken(s: string, pos: number, what: string): { text: string; end: number } {
  let i = pos;
  while (i < s.length && isTokenChar(s.charCodeAt(i))) i++;
  if (i === pos) throw new SipParseError(`Via: missing ${what}`);
  return { text: s.slice(pos, i), end: i };
}

function expectSlash(s: string, pos: number): number {
  const i = skipWsp(s, pos);
  if (s.charCodeAt(i) !== 47) throw new SipParseError('Via: malformed sent-protocol');
  return skipWsp(s, i + 1);
}

export function parseViaParm(value: string): Via {
  const s = trimWsp(value);
  const name = readToken(s, 0, 'protocol name');
  const version = readToken(s, expectSlash(s, name.end), 'protocol version');
  const transport = readToken(s, expectSlash(s, version.end), 'transport');
  let i = skipWsp(s, transport.end);
  if (i === transport.end) throw new SipParseError('Via: missing sent-by');
  let host: string;
  if (s.charCodeAt(i) === 91) {
    const close = s.indexOf(']', i);
    host = close < 0 ? '' : s.slice(i, close + 1);
    if (!isIpv6Reference(host)) throw new SipParseError('Via: bad IPv6 reference');
    i = close + 1;
  } else {
    const start = i;
    while (i < s.length) {
      const c = s.charCodeAt(i);
      if (c === 58 || c === 59 || c === 32 || c === 9) break;
      i++;
    }
    host = s.slice(start, i);
    if (!isHostname(host)) throw new SipParseError(`Via: bad host ${host.slice(0, 60)}`);
  }
  i = skipWsp(s, i);
  let port: number | undefined;
  if (s.charCodeAt(i) === 58) {
    i = skipWsp(s, i + 1);
    const start = i;
    while (i < s.length && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57) i++;
    port = parseDigits(s.slice(start, i), 5);
    if (port === undefined || port > 65535) throw new SipParseError('Via: bad port');
  }
  const params = new Params();
  const end = parseParamsAt(s, i, params);
  if (end !== s.length) throw new SipParseError(`Via: unexpected text ${s.slice(end, end + 40)}`);
  const rportText = params.get('rport');
  let rport: number | true | undefined;
  if (rportText === null) rport = true;
  else if (rportText !== undefined) {
    rport = parseDigits(rportText, 5);
    if (rport === undefined || rport > 65535) throw new SipParseError('Via: bad rport');
  }
  const ttlText = params.get('ttl');
  const ttl = ttlText === null || ttlText === undefined ? undefined : parseDigits(ttlText, 3);
  if (typeof ttlText === 'string' && (ttl === undefined || ttl > 255)) throw new SipParseError('Via: bad ttl');
  return {
    protocol: `${name.text.toUpperCase()}/${version.text}`,
    transport: transport.text.toUpperCase(),
    host,
    port,
    params,
    branch: params.get('branch') ?? undefined,
    received: params.get('received') ?? undefined,
    rport,
    maddr: params.get('maddr') ?? undefined,
    ttl,
  };
}

/** All via-parms of one or more Via header lines, top first. */
export function parseViaValues(lines: readonly string[]): Via[] {
  const out: Via[] = [];
  for (const line of lines) {
    for (const part of splitList(line)) {
      if (part.length === 0) throw new SipParseError('Via: empty value');
      out.push(parseViaParm(part));
    }
  }
  return out;
}

export function formatVia(v: {
  transport: string;
  host: string;
  port?: number;
  branch: string;
  rport?: boolean;
}): string {
  const hostport = v.port === undefined ? v.host : `${v.host}:${v.port}`;
  return `SIP/2.0/${v.transport.toUpperCase()} ${hostport};branch=${v.branch}${v.rport ? ';rport' : ''}`;
}

function formatViaParm(v: Via): string {
  const port = v.port === undefined ? '' : `:${v.port}`;
  return `${v.protocol}/${v.transport} ${v.host}${port}${v.params.toString()}`;
}

/**
 * What a server transport does to the top Via of a request it receives (RFC 3261 sec. 18.2.1,
 * RFC 3581 sec. 4): `received` when the packet's source differs from sent-by (always when
 * `rport` was asked for), and `rport` filled with the source port.
 */
export function stampReceived(headers: Headers, sourceIp: string, sourcePort: number): void {
  const line = stampedViaLine(headers, sourceIp, sourcePort);
  if (line !== undefined) headers.replaceFirst('via', line);
}

/** The first Via line as `stampReceived` rewrites it; undefined without a Via. */
export function stampedViaLine(headers: Headers, sourceIp: string, sourcePort: number): string | undefined {
  const first = headers.get('via');
  if (first === undefined) return undefined;
  const parts = splitList(first);
  return stampTopVia(parseViaParm(parts[0] ?? ''), parts, sourceIp, sourcePort).line;
}

/**
 * The stamp of `stampReceived` applied to an already parsed top via-parm (whose Params it
 * updates in place) and the split first Via line: the rewritten line, and the via-parm as
 * parsing that line again would give it, so a message can keep its parsed view.
 */
export function stampTopVia(top: Via, firstLineParts: string[], sourceIp: string, sourcePort: number): { line: string; top: Via } {
  const ip = sourceIp.includes(':') && !sourceIp.startsWith('[') ? `[${sourceIp}]` : sourceIp;
  let stamped = top;
  if (top.rport !== undefined) {
    top.params.set('received', sourceIp);
    top.params.set('rport', String(sourcePort));
    stamped = { ...top, received: sourceIp, rport: sourcePort };
  } else if (top.host.toLowerCase() !== ip.toLowerCase()) {
    top.params.set('received', sourceIp);
    stamped = { ...top, received: sourceIp };
  }
  firstLineParts[0] = formatViaParm(top);
  return { line: firstLineParts.length === 1 ? firstLineParts[0] : firstLineParts.join(', '), top: stamped };
}

export interface ResponseTarget {
  readonly transport: string;
  readonly host: string;
  readonly port: number;
}

/**
 * Where an unreliable transport sends a response (RFC 3261 sec. 18.2.2, RFC 3581 sec. 4):
 * maddr if present, else `received` (or sent-by), at `rport` if filled in, else the sent-by
 * port or the transport default. Reliable transports answer on the request's connection.
 */
export function responseTarget(top: Via): ResponseTarget {
  const defaultPort = top.transport === 'TLS' || top.transport === 'WSS' ? 5061 : 5060;
  if (top.maddr) return { transport: top.transport, host: top.maddr, port: top.port ?? defaultPort };
  const host = top.received ?? top.host;
  const port = typeof top.rport === 'number' ? top.rport : (top.port ?? defaultPort);
  return { transport: top.transport, host, port };
}
