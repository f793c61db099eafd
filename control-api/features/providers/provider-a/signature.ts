import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Provider A's request signature (its public webhook-security documentation): the header
 * `X-Twilio-Signature` carries base64(HMAC-SHA1(auth token, URL + params)), where URL is the full
 * URL the provider requested (scheme, host, port as configured, path and query string) and
 * params are the POST form fields sorted by name (byte order, case-sensitive), each appended as
 * name then value with no separator; a name sent several times contributes each of its values in
 * sorted order. A GET, the media stream's WebSocket handshake included, signs the URL alone.
 */
export const signatureHeaderA = 'x-twilio-signature';

export type FormParams = readonly (readonly [string, string])[];

export function signatureA(authToken: string, url: string, params: FormParams = []): string {
  const byName = new Map<string, string[]>();
  for (const [name, value] of params) byName.set(name, [...(byName.get(name) ?? []), value]);
  let data = url;
  for (const name of [...byName.keys()].sort(byCodeUnits)) {
    for (const value of (byName.get(name) ?? []).sort(byCodeUnits)) data += name + value;
  }
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

/**
 * True when `header` is the signature of the request. The provider's own validators also accept
 * the URL with the default port written out or left off (443 for https, 80 for http), because a
 * proxy in front of the receiver may add or drop it: so do we.
 */
export function validSignatureA(authToken: string, header: string | undefined, url: string, params: FormParams = []): boolean {
  if (!header) return false;
  const given = Buffer.from(header, 'utf8');
  return urlVariants(url).some((candidate) => {
    const expected = Buffer.from(signatureA(authToken, candidate, params), 'utf8');
    return expected.length === given.length && timingSafeEqual(expected, given);
  });
}

function urlVariants(url: string): string[] {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return [url];
  }
  const defaultPort = parsed.protocol === 'https:' || parsed.protocol === 'wss:' ? '443' : '80';
  const withPort = new URL(url);
  // URL drops a default port on assignment, so build the explicit form by hand.
  const hostWithPort = `${withPort.hostname.includes(':') ? `[${withPort.hostname}]` : withPort.hostname}:${parsed.port || defaultPort}`;
  const explicit = `${parsed.protocol}//${parsed.username ? `${parsed.username}${parsed.password ? `:${parsed.password}` : ''}@` : ''}${hostWithPort}${parsed.pathname}${parsed.search}`;
  const implicit = parsed.port === '' || parsed.port === defaultPort ? `${parsed.protocol}//${parsed.host.replace(/:\d+$/, '')}${parsed.pathname}${parsed.search}` : url;
  return [...new Set([url, explicit, implicit])];
}

const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
