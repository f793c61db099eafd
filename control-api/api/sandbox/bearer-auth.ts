import { createHash, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../platform/store/schema.js';
import { verifyToken } from '../../model/tenants/api-tokens.js';
import { unauthorized } from './plant-errors.js';

/** Who a plant belongs to: the tenant of an issued token, or a static token itself. */
export interface PlantOwner {
  /** `tenant:<uuid>` or `static:<sha-256 hex>`; the clear token is never stored. */
  readonly key: string;
  readonly tenantId: string | null;
}

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/**
 * A static token's owner key is a digest of the token under its own label, so it cannot be matched
 * against api_tokens.token_hash and stays the same across restarts and config reloads.
 */
export const staticOwnerKey = (token: string): string =>
  `static:${createHash('sha256').update('vap plant-store owner\0', 'utf8').update(token, 'utf8').digest('hex')}`;

// RFC 6750 sec. 2.1: credentials = "Bearer" 1*SP b64token; the scheme is case-insensitive (RFC 9110
// sec. 11.1). Any visible ASCII is taken as the token, a little wider than b64token, so a configured
// static token with other punctuation still works; whitespace inside is malformed.
const bearerPattern = /^Bearer +([\x21-\x7E]+) *$/i;

export interface BearerAuthenticator {
  authenticate(authorization: string | undefined): Promise<PlantOwner>;
}

export function bearerAuthenticator(db: Kysely<Database>, staticTokens: readonly string[]): BearerAuthenticator {
  const staticDigests = staticTokens.map((token) => ({ digest: digest(token), key: staticOwnerKey(token) }));
  return {
    async authenticate(authorization) {
      if (!authorization) throw unauthorized('missing bearer token: send Authorization: Bearer <token>', false);
      const match = bearerPattern.exec(authorization);
      if (!match?.[1]) throw unauthorized('malformed Authorization header: expected Bearer <token>', true);
      const token = match[1];
      // Comparing fixed-length digests with timingSafeEqual, over every configured token, keeps the
      // time independent of where a guess differs.
      const presented = digest(token);
      let found: string | undefined;
      for (const candidate of staticDigests) {
        if (timingSafeEqual(candidate.digest, presented) && found === undefined) found = candidate.key;
      }
      if (found) return { key: found, tenantId: null };
      const owner = await verifyToken(db, token, 'sandbox');
      if (!owner) throw unauthorized('invalid, expired or revoked token, or it lacks the sandbox scope', true);
      return { key: `tenant:${owner.tenantId}`, tenantId: owner.tenantId };
    },
  };
}
