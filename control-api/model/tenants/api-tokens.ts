import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../platform/store/schema.js';
import type { TokenScope } from '../domain/api-token.js';


export interface IssuedToken {
  readonly id: string;
  /** The only time the secret exists in clear: returned once, never stored or logged. */
  readonly token: string;
  readonly prefix: string;
}

export interface TokenOwner {
  readonly tokenId: string;
  readonly tenantId: string;
  readonly scopes: readonly TokenScope[];
}

export const hashToken = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

export async function issueToken(
  db: Kysely<Database>,
  input: { tenantId: string; name: string; scopes: readonly TokenScope[]; expiresAt?: Date | null },
): Promise<IssuedToken> {
  const token = `vap_${randomBytes(32).toString('base64url')}`;
  const prefix = token.slice(0, 12);
  const row = await db
    .insertInto('api_tokens')
    .values({
      tenant_id: input.tenantId,
      name: input.name,
      token_hash: hashToken(token),
      token_prefix: prefix,
      scopes: [...input.scopes],
      expires_at: input.expiresAt ?? null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { id: row.id, token, prefix };
}

/** `lastUsedAt` is refreshed at most this often, so a busy token does not write on every request. */
export const lastUsedResolutionMs = 60_000;

/**
 * Resolves a presented token to its owner, or null when it is unknown, revoked, expired or lacks
 * the scope. Lookup is by SHA-256 digest, so no secret is ever compared byte by byte. A successful
 * use records `last_used_at` (to the minute), which the token list shows so an owner can tell an
 * idle token worth revoking from one in use.
 */
export async function verifyToken(
  db: Kysely<Database>,
  token: string,
  scope: TokenScope,
  now: Date = new Date(),
): Promise<TokenOwner | null> {
  if (token.length === 0 || token.length > 512) return null;
  const row = await db
    .selectFrom('api_tokens')
    .select(['id', 'tenant_id', 'scopes', 'expires_at', 'revoked_at', 'last_used_at'])
    .where('token_hash', '=', hashToken(token))
    .executeTakeFirst();
  if (!row || row.revoked_at) return null;
  if (row.expires_at && row.expires_at.getTime() <= now.getTime()) return null;
  if (!row.scopes.includes(scope)) return null;
  if (!row.last_used_at || now.getTime() - row.last_used_at.getTime() >= lastUsedResolutionMs) {
    await db.updateTable('api_tokens').set({ last_used_at: now }).where('id', '=', row.id).execute();
  }
  return { tokenId: row.id, tenantId: row.tenant_id, scopes: row.scopes as TokenScope[] };
}

export async function revokeToken(db: Kysely<Database>, tenantId: string, tokenId: string, now: Date = new Date()): Promise<boolean> {
  const result = await db
    .updateTable('api_tokens')
    .set({ revoked_at: now })
    .where('id', '=', tokenId)
    .where('tenant_id', '=', tenantId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
