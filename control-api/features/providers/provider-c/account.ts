import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ProviderCallEntry } from '../provider-calls.js';
import type { CloudAccount, ProviderNumber } from '../provider-numbers.js';

/** Provider C's account of a call or number; undefined when it belongs to another provider. */
export function accountC(of: ProviderCallEntry | ProviderNumber | undefined): CloudAccount<'providerC'> | undefined {
  const account = of && ('number' in of ? of.number.account : of.account);
  return account?.type === 'providerC' ? account : undefined;
}

export const signatureHeaderC = 'x-plivo-signature-v2';
export const nonceHeaderC = 'x-plivo-signature-v2-nonce';

/**
 * Provider C's request signature (the XML-and-stream providers' "V2" scheme, as their public
 * docs and SDKs describe it): `X-Plivo-Signature-V2` = base64(HMAC-SHA256(auth token, URL without
 * its query string + `X-Plivo-Signature-V2-Nonce`)). C's API Key is the account id and its API
 * Token the auth token (docs/providers.md, how C's credentials were read).
 */
export function signatureC(apiToken: string, url: string, nonce: string): string {
  return createHmac('sha256', apiToken).update(url.split('?')[0] + nonce, 'utf8').digest('base64');
}

export function validSignatureC(apiToken: string, signature: string | undefined, nonce: string | undefined, url: string): boolean {
  if (!signature || !nonce) return false;
  const given = Buffer.from(signature, 'utf8');
  const expected = Buffer.from(signatureC(apiToken, url, nonce), 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
