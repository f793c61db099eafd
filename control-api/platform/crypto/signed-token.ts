import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Stateless signed tokens `<prefix>.<base64url JSON claims>.<HMAC-SHA256>`: any process holding
 * the key verifies them without a table. Each use has its own prefix and its own key (derived
 * from the platform's secret key under a label), so one kind of token never passes for another.
 */
export interface TokenFormat<Claims> {
  readonly prefix: string;
  /** Longer tokens are refused unread. */
  readonly maxLength: number;
  /** The claims' shape, checked after the signature (a signed token of an older shape is malformed). */
  readonly isClaims: (value: unknown) => value is Claims & { readonly expiresAt: number };
}

export type TokenCheck<Claims> = { readonly ok: true; readonly claims: Claims } | { readonly ok: false; readonly why: 'malformed' | 'signature' | 'expired' };

/** A label-specific signing key, so the key signs nothing else. */
export const derivedKey = (secretKey: Buffer, label: string): Buffer => createHmac('sha256', secretKey).update(label).digest();

const sign = (key: Buffer, prefix: string, payload: string): string => createHmac('sha256', key).update(`${prefix}.${payload}`).digest('base64url');

export function signToken<Claims>(format: TokenFormat<Claims>, key: Buffer, claims: Claims): string {
  const payload = Buffer.from(JSON.stringify(claims), 'utf8').toString('base64url');
  return `${format.prefix}.${payload}.${sign(key, format.prefix, payload)}`;
}

/** Verifies the signature in constant time, then the claims' shape, then the expiry against `now` (epoch ms). */
export function verifyToken<Claims>(format: TokenFormat<Claims>, key: Buffer, token: string, now: number): TokenCheck<Claims> {
  const parts = token.split('.');
  if (parts.length !== 3 || parts[0] !== format.prefix || !parts[1] || !parts[2] || token.length > format.maxLength) return { ok: false, why: 'malformed' };
  const expected = Buffer.from(sign(key, format.prefix, parts[1]), 'utf8');
  const given = Buffer.from(parts[2], 'utf8');
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return { ok: false, why: 'signature' };
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
  } catch {
    return { ok: false, why: 'malformed' };
  }
  if (!format.isClaims(claims)) return { ok: false, why: 'malformed' };
  if (claims.expiresAt <= now) return { ok: false, why: 'expired' };
  return { ok: true, claims };
}

/**
 * A token format whose claims must carry these fields with these types (`expiresAt` always, a
 * number): a signed token of another shape is malformed.
 */
export function tokenFormat<Claims extends { readonly expiresAt: number }>(prefix: string, maxLength: number, fields: Readonly<Record<string, 'string' | 'number'>>): TokenFormat<Claims> {
  const wanted = Object.entries({ ...fields, expiresAt: 'number' });
  return {
    prefix,
    maxLength,
    isClaims: (value): value is Claims => typeof value === 'object' && value !== null && wanted.every(([key, type]) => typeof Reflect.get(value, key) === type),
  };
}
