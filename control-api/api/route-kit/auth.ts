import { createHash, timingSafeEqual } from 'node:crypto';
import type Koa from 'koa';
import type { Kysely } from 'kysely';
import { AppError } from '../../../core/errors.js';
import { noteTenant } from '../../platform/http/request-log.js';
import type { Database } from '../../platform/store/schema.js';
import type { TokenScope } from '../../model/domain/api-token.js';
import { verifyToken } from '../../model/tenants/api-tokens.js';

/** Who is calling: the operator reaches every tenant, a tenant token only its own. */
export type Principal = { readonly kind: 'operator' } | { readonly kind: 'tenant'; readonly tenantId: string; readonly tokenId: string };

const unauthenticated = (): AppError => new AppError('unauthenticated', 'Authentication required: send Authorization: Bearer <token>');

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/** Constant-time comparison: digests have equal length, so timing reveals neither content nor length. */
export function sameSecret(presented: string, expected: string): boolean {
  return timingSafeEqual(digest(presented), digest(expected));
}

function bearer(ctx: Koa.Context): string | undefined {
  const header = ctx.get('Authorization');
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

/**
 * Resolves the caller from `Authorization: Bearer <token>`: the operator token, or a tenant API
 * token with the `management` scope, or with one of `scopes` where a route allows others (unknown,
 * revoked, expired or wrongly scoped tokens are all the same 401, so a probe learns nothing about
 * which tokens exist).
 */
export async function authenticate(ctx: Koa.Context, db: Kysely<Database>, operatorToken: string, scopes: readonly TokenScope[] = ['management']): Promise<Principal> {
  const token = bearer(ctx);
  if (!token) throw unauthenticated();
  if (sameSecret(token, operatorToken)) return { kind: 'operator' };
  for (const scope of scopes) {
    const owner = await verifyToken(db, token, scope);
    if (!owner) continue;
    noteTenant(ctx, owner.tenantId);
    return { kind: 'tenant', tenantId: owner.tenantId, tokenId: owner.tokenId };
  }
  throw unauthenticated();
}

export function requireOperator(principal: Principal, action: string): void {
  if (principal.kind !== 'operator') throw new AppError('permission_denied', `only the operator credential may ${action}`);
}

/** True when the principal may act on the tenant; callers answer 404 otherwise, so existence does not leak. */
export const reaches = (principal: Principal, tenantId: string): boolean => principal.kind === 'operator' || principal.tenantId === tenantId;
