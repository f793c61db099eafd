import { hasWhitespaceOrControl, isTokenChar, isWsp, skipWsp, trimWsp } from './chars.js';
import { SipParseError } from './errors.js';
import { Params, parseParamsAt, quoteString, readQuotedString } from './params.js';
import { parseUri, type Uri } from './uri.js';

/**
 * name-addr / addr-spec with header parameters (RFC 3261 sec. 20.10, 25.1), as used by From,
 * To, Contact, Route, Record-Route, Refer-To and friends. The URI is parsed on first use.
 */
export class NameAddr {
  private parsedUri: Uri | undefined;

  constructor(
    readonly uriText: string,
    readonly displayName: string | undefined,
    readonly params: Params,
    /** Contact: * (RFC 3261 sec. 10.2.2) */
    readonly wildcard = false,
  ) {}

  get uri(): Uri {
    return (this.parsedUri ??= parseUri(this.uriText));
  }

  get tag(): string | undefined {
    return this.params.get('tag') ?? undefined;
  }

  toString(): string {
    if (this.wildcard) return `*${this.params.toString()}`;
    const name = this.displayName === undefined ? '' : `${quoteString(this.displayName)} `;
    return `${name}<${this.uriText}>${this.params.toString()}`;
  }
}

function readDisplayTokens(s: string, end: number): string {
  // display-name = *(token LWS) / quoted-string: unquoted names may only hold tokens (sec. 25.1),
  // so "Bell, Alexander <sip:...>" is malformed (RFC 4475 sec. 3.1.2.15).
  const text = trimWsp(s.slice(0, end));
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (!isTokenChar(c) && !isWsp(c)) throw new SipParseError(`display name needs quotes: ${text.slice(0, 60)}`);
  }
  return text.replace(/[ \t]+/g, ' ');
}

export function parseNameAddr(value: string, options: { allowWildcard?: boolean } = {}): NameAddr {
  const s = trimWsp(value);
  if (s.length === 0) throw new SipParseError('empty address');
  const params = new Params();
  if (options.allowWildcard && s.charCodeAt(0) === 42) {
    const end = parseParamsAt(s, 1, params);
    if (end !== s.length) throw new SipParseError('malformed wildcard Contact');
    return new NameAddr('*', undefined, params, true);
  }
  let displayName: string | undefined;
  let pos: number;
  if (s.charCodeAt(0) === 34) {
    const q = readQuotedString(s, 0);
    displayName = q.value;
    pos = skipWsp(s, q.end);
    if (s.charCodeAt(pos) !== 60) throw new SipParseError('quoted display name not followed by <URI>');
  } else {
    pos = s.indexOf('<');
    if (pos >= 0) {
      const name = readDisplayTokens(s, pos);
      displayName = name.length > 0 ? name : undefined;
    }
  }
  let uriText: string;
  let after: number;
  if (pos >= 0) {
    const close = s.indexOf('>', pos);
    if (close < 0) throw new SipParseError('unterminated <URI>');
    uriText = s.slice(pos + 1, close);
    after = close + 1;
  } else {
    // addr-spec form: parameters after the URI belong to the header, so a URI with
    // parameters or headers of its own must be in <> (RFC 3261 sec. 20.10, RFC 4475 3.1.2.13).
    const semi = s.indexOf(';');
    uriText = s.slice(0, semi < 0 ? s.length : semi).trimEnd();
    after = semi < 0 ? s.length : semi;
    if (uriText.indexOf('?') >= 0) throw new SipParseError('URI with headers must be enclosed in <>');
  }
  // LAQUOT/RAQUOT allow no whitespace inside the brackets (RFC 4475 sec. 3.1.2.14).
  if (uriText.length === 0 || hasWhitespaceOrControl(uriText)) {
    throw new SipParseError(`malformed address URI: ${uriText.slice(0, 60)}`);
  }
  if (uriText.indexOf(':') <= 0) throw new SipParseError(`address without URI scheme: ${uriText.slice(0, 60)}`);
  const end = parseParamsAt(s, after, params);
  if (end !== s.length) throw new SipParseError(`unexpected text in address: ${s.slice(end, end + 40)}`);
  return new NameAddr(uriText, displayName, params);
}
