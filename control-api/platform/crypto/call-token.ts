import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Web call tokens: what a browser presents in its INVITE (`X-Call-Token`) to run one tenant's
 * recipe. Stateless and signed: HMAC-SHA256 under a key derived from the platform's secret key, so
 * the gateway role verifies what the control role issued without a table, in another process too.
 * Short-lived (webCalls.tokenTtlSeconds) and bound to one target; the gateway also refuses a second
 * call with the same token id while it is valid (web-call-authority.ts).
 */
export interface CallTokenClaims {
  readonly tenantId: string;
  /** Exactly one target: a number (its recipe and settings) or a recipe called directly. */
  readonly target: { readonly kind: 'number'; readonly numberId: string } | { readonly kind: 'recipe'; readonly recipeId: string };
  /** Expiry, epoch ms. */
  readonly expiresAt: number;
  /** Speech language of a recipe call (a number brings its own). */
  readonly language?: string;
  /** Token id, for single use. */
  readonly id: string;
}

const prefix = 'wct1';

/** The signing key: a label-specific derivation, so this key signs nothing else. */
export const callTokenKey = (secretKey: Buffer): Buffer => createHmac('sha256', secretKey).update('vap web-call token v1').digest();

const sign = (key: Buffer, payload: string): string => createHmac('sha256', key).update(`${prefix}.${payload}`).digest('base64url');

export function issueCallToken(key: Buffer, claims: Omit<CallTokenClaims, 'id'>): { token: string; claims: CallTokenClaims } {
  const full: CallTokenClaims = { ...claims, id: randomBytes(12).toString('base64url') };
  const payload = Buffer.from(JSON.stringify(full), 'utf8').toString('base64url');
  return { token: `${prefix}.${payload}.${sign(key, payload)}`, claims: full };
}

export type CallTokenCheck = { readonly ok: true; readonly claims: CallTokenClaims } | { readonly ok: false; readonly why: 'malformed' | 'signature' | 'expired' };

/** Verifies the signature in constant time, then the expiry against `now` (epoch ms). */
export function verifyCallToken(key: Buffer, token: string, now: number): CallTokenCheck {
  const parts = token.split('.');
  if (parts.length !== 3 || parts[0] !== prefix || !parts[1] || !parts[2] || token.length > 2048) return { ok: false, why: 'malformed' };
  const expected = Buffer.from(sign(key, parts[1]), 'utf8');
  const given = Buffer.from(parts[2], 'utf8');
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return { ok: false, why: 'signature' };
  let claims: CallTokenClaims;
  try {
    claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8')) as CallTokenClaims;
  } catch {
    return { ok: false, why: 'malformed' };
  }
  if (typeof claims.expiresAt !== 'number' || typeof claims.tenantId !== 'string' || typeof claims.id !== 'string') return { ok: false, why: 'malformed' };
  if (claims.expiresAt <= now) return { ok: false, why: 'expired' };
  return { ok: true, claims };
}
