import { isTokenChar, isWsp } from '../message/chars.js';
import { quoteString, readQuotedString } from '../message/params.js';
import { SipParseError } from '../message/errors.js';

/**
 * `scheme auth-param *(COMMA auth-param)` as used by WWW-Authenticate, Authorization and their
 * Proxy- forms (RFC 3261 sec. 25.1, RFC 7616 sec. 3.3/3.4). Names are case-insensitive.
 */
export interface AuthValue {
  readonly scheme: string;
  readonly params: ReadonlyMap<string, string>;
}

export function parseAuthValue(value: string): AuthValue {
  let i = 0;
  while (i < value.length && isWsp(value.charCodeAt(i))) i++;
  const start = i;
  while (i < value.length && isTokenChar(value.charCodeAt(i))) i++;
  if (i === start) throw new SipParseError('missing authentication scheme');
  const scheme = value.slice(start, i);
  const params = new Map<string, string>();
  for (;;) {
    while (i < value.length && (isWsp(value.charCodeAt(i)) || value.charCodeAt(i) === 44)) i++;
    if (i >= value.length) break;
    const nameStart = i;
    while (i < value.length && isTokenChar(value.charCodeAt(i))) i++;
    if (i === nameStart) throw new SipParseError('malformed authentication parameter');
    const name = value.slice(nameStart, i).toLowerCase();
    while (i < value.length && isWsp(value.charCodeAt(i))) i++;
    if (value.charCodeAt(i) !== 61) throw new SipParseError(`authentication parameter ${name} has no value`);
    i++;
    while (i < value.length && isWsp(value.charCodeAt(i))) i++;
    let v: string;
    if (value.charCodeAt(i) === 34) {
      const q = readQuotedString(value, i);
      v = q.value;
      i = q.end;
    } else {
      const valueStart = i;
      while (i < value.length && value.charCodeAt(i) !== 44 && !isWsp(value.charCodeAt(i))) i++;
      v = value.slice(valueStart, i);
    }
    if (params.has(name)) throw new SipParseError(`duplicate authentication parameter ${name}`);
    params.set(name, v);
  }
  return { scheme, params };
}

/** Writes params; names listed in `tokens` go unquoted (RFC 7616 sec. 3.4: algorithm, qop, nc...). */
export function formatAuthValue(scheme: string, params: readonly (readonly [string, string])[], tokens: ReadonlySet<string>): string {
  return `${scheme} ${params.map(([k, v]) => (tokens.has(k) ? `${k}=${v}` : `${k}=${quoteString(v)}`)).join(', ')}`;
}
