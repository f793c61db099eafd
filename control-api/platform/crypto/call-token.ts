import { randomBytes } from 'node:crypto';
import { derivedKey, signToken, tokenFormat, verifyToken, type TokenCheck } from './signed-token.js';

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

const format = tokenFormat<CallTokenClaims>('wct1', 2048, { tenantId: 'string', id: 'string' });

/** The signing key: a label-specific derivation, so this key signs nothing else. */
export const callTokenKey = (secretKey: Buffer): Buffer => derivedKey(secretKey, 'vap web-call token v1');

export function issueCallToken(key: Buffer, claims: Omit<CallTokenClaims, 'id'>): { token: string; claims: CallTokenClaims } {
  const full: CallTokenClaims = { ...claims, id: randomBytes(12).toString('base64url') };
  return { token: signToken(format, key, full), claims: full };
}

export type CallTokenCheck = TokenCheck<CallTokenClaims>;

/** Verifies the signature in constant time, then the expiry against `now` (epoch ms). */
export const verifyCallToken = (key: Buffer, token: string, now: number): CallTokenCheck => verifyToken(format, key, token, now);
