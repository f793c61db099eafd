import { timingSafeEqual } from 'node:crypto';
import type { ProviderCallEntry } from '../provider-calls.js';
import type { CloudAccount, ProviderNumber } from '../provider-numbers.js';

/** Provider B's account of a call or number; undefined when it belongs to another provider. */
export function accountB(of: ProviderCallEntry | ProviderNumber | undefined): CloudAccount<'providerB'> | undefined {
  const account = of && ('number' in of ? of.number.account : of.account);
  return account?.type === 'providerB' ? account : undefined;
}

/**
 * Provider B authenticates what it sends us with HTTP Basic auth (its stream documentation:
 * `Authorization: Basic base64(API_KEY:API_TOKEN)` on the WebSocket handshake, the same on the
 * endpoints it calls when configured so); it does not sign bodies. Compared in constant time.
 */
export function validBasicAuthB(account: CloudAccount<'providerB'>, header: string | undefined): boolean {
  if (!header?.startsWith('Basic ')) return false;
  const given = Buffer.from(header.slice(6).trim(), 'base64');
  const expected = Buffer.from(`${account.apiKey}:${account.apiToken}`, 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
