import { isToken, isTokenChar, skipWsp, trimWsp } from './chars.js';
import { SipParseError } from './errors.js';
import { Params, parseParamsAt } from './params.js';
import { splitList } from './headers.js';

/** `m-type SLASH m-subtype *(SEMI m-parameter)` (RFC 3261 sec. 20.15, 25.1), names lower-cased. */
export interface MediaType {
  readonly type: string;
  readonly subtype: string;
  readonly params: Params;
}

/** Reads `type/subtype` and its parameters; `allowWildcards` for Accept's media-range (sec. 20.1). */
function parseTypeAt(value: string, allowWildcards: boolean): MediaType {
  const s = trimWsp(value);
  let i = 0;
  while (i < s.length && isTokenChar(s.charCodeAt(i))) i++;
  const type = s.slice(0, i);
  i = skipWsp(s, i);
  if (s.charCodeAt(i) !== 47) throw new SipParseError(`media type without "/": ${s.slice(0, 40)}`);
  i = skipWsp(s, i + 1);
  const subStart = i;
  while (i < s.length && isTokenChar(s.charCodeAt(i))) i++;
  const subtype = s.slice(subStart, i);
  if (!isToken(type) || !isToken(subtype)) throw new SipParseError(`malformed media type: ${s.slice(0, 40)}`);
  // media-range allows `*/*` and `type/*` only; a media-type has no wildcards at all.
  if (type === '*' && subtype !== '*') throw new SipParseError(`malformed media range: ${s.slice(0, 40)}`);
  if (!allowWildcards && (type === '*' || subtype === '*')) throw new SipParseError(`wildcard in a media type: ${s.slice(0, 40)}`);
  const params = new Params();
  const end = parseParamsAt(s, i, params);
  if (end !== s.length) throw new SipParseError(`unexpected text in media type: ${s.slice(end, end + 40)}`);
  return { type: type.toLowerCase(), subtype: subtype.toLowerCase(), params };
}

/** A Content-Type value (RFC 3261 sec. 20.15). */
export function parseMediaType(value: string): MediaType {
  return parseTypeAt(value, false);
}

export interface MediaRange extends MediaType {
  /** qvalue (sec. 20.1, 25.1): 0 means "not acceptable". */
  readonly q: number;
}

/** qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ) (RFC 3261 sec. 25.1). */
function parseQ(v: string | null | undefined): number {
  if (v === undefined) return 1;
  if (v === null || !/^(0(\.[0-9]{0,3})?|1(\.0{0,3})?)$/.test(v)) throw new SipParseError(`bad qvalue: ${String(v).slice(0, 20)}`);
  return Number(v);
}

/** Every media-range of the Accept header lines (RFC 3261 sec. 20.1); an empty line lists none. */
export function parseAccept(lines: readonly string[]): MediaRange[] {
  const out: MediaRange[] = [];
  for (const line of lines) {
    if (trimWsp(line).length === 0) continue;
    for (const part of splitList(line)) {
      const t = parseTypeAt(part, true);
      out.push({ ...t, q: parseQ(t.params.get('q')) });
    }
  }
  return out;
}

/**
 * Whether `type/subtype` is acceptable to the sender of these Accept lines (RFC 3261 sec. 20.1,
 * with RFC 7231 sec. 5.3.2's precedence): no Accept header means application/sdp only for
 * session descriptions (sec. 20.1), an empty one means nothing; otherwise the most specific
 * matching range decides, and a q of 0 refuses.
 */
export function isAcceptable(lines: readonly string[], type: string, subtype: string): boolean {
  if (lines.length === 0) return type === 'application' && subtype === 'sdp';
  let best: MediaRange | undefined;
  let bestRank = -1;
  for (const r of parseAccept(lines)) {
    const rank = r.type === type && r.subtype === subtype ? 2 : r.type === type && r.subtype === '*' ? 1 : r.type === '*' ? 0 : -1;
    if (rank > bestRank) {
      best = r;
      bestRank = rank;
    }
  }
  return best !== undefined && best.q > 0;
}
