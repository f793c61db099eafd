import type Router from '@koa/router';
import type Koa from 'koa';
import { sql } from 'kysely';
import { z } from 'zod';
import { AppError, notFound } from '../../../core/errors.js';
import { apiTokenRequestSchema } from '../../model/domain/api-token.js';
import { safeParseReporting } from '../../platform/validation.js';
import { tokenScopes } from '../../model/domain/api-token.js';
import { issueToken, revokeToken } from '../../model/tenants/api-tokens.js';
import { fromZodError } from '../../platform/http/error-response.js';
import { readJsonBody } from '../../platform/http/read-body.js';
import { authenticate } from '../route-kit/auth.js';
import { parseListQuery } from '../route-kit/list-query.js';
import type { ManagementDeps } from '../route-kit/management-deps.js';
import { locationOf } from './location.js';
import { resourceId } from './resource-routes.js';
import { tenantInScope, type TenantRef } from '../route-kit/tenant-scope.js';

/** A token as listed: never the secret, only the prefix that identifies it to a human. */
export const tokenSchema = z.object({
  id: z.string(),
  name: z.string(),
  prefix: z.string(),
  scopes: z.array(z.enum(tokenScopes)),
  expiresAt: z.string().nullable(),
  revokedAt: z.string().nullable(),
  lastUsedAt: z.string().nullable(),
  createdAt: z.string(),
});

/** Returned once, at issue: the only time the clear token leaves the server. */
export const issuedTokenSchema = tokenSchema.extend({ token: z.string() });

type TokenBody = z.infer<typeof tokenSchema>;

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

// The cursor names the last token seen; the database compares its own (microsecond) timestamps,
// which a JavaScript Date (milliseconds) would truncate.
const encodeCursor = (id: string): string => Buffer.from(id, 'utf8').toString('base64url');

function decodeCursor(cursor: string): string {
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) {
    throw new AppError('invalid_argument', 'cursor is not one this API returned', { issues: [{ path: 'cursor', message: 'invalid cursor' }] });
  }
  return id;
}

/** `/tenants/:clientId/tokens`: issue (secret shown once), list (never the secret), revoke. */
export function mountTokenRoutes(router: Router, deps: ManagementDeps): void {
  const { db } = deps;
  const scope = async (ctx: Koa.Context): Promise<TenantRef> => {
    const principal = await authenticate(ctx, db, deps.operatorToken);
    return tenantInScope(db, principal, (ctx.params as { clientId: string }).clientId, ctx);
  };
  const columns = ['id', 'name', 'token_prefix', 'scopes', 'expires_at', 'revoked_at', 'last_used_at', 'created_at'] as const;
  type Row = { id: string; name: string; token_prefix: string; scopes: string[]; expires_at: Date | null; revoked_at: Date | null; last_used_at: Date | null; created_at: Date };
  const render = (row: Row): TokenBody => ({
    id: row.id,
    name: row.name,
    prefix: row.token_prefix,
    scopes: row.scopes as TokenBody['scopes'],
    expiresAt: iso(row.expires_at),
    revokedAt: iso(row.revoked_at),
    lastUsedAt: iso(row.last_used_at),
    createdAt: row.created_at.toISOString(),
  });

  router.get('/tenants/:clientId/tokens', async (ctx) => {
    const tenant = await scope(ctx);
    const query = parseListQuery(ctx.query, {});
    let select = db.selectFrom('api_tokens').select(columns).where('tenant_id', '=', tenant.id);
    if (query.cursor) {
      const after = decodeCursor(query.cursor);
      select = select.where(sql<boolean>`(created_at, id) > (select t.created_at, t.id from api_tokens t where t.id = ${after}::uuid and t.tenant_id = ${tenant.id}::uuid)`);
    }
    const rows = await select.orderBy('created_at').orderBy('id').limit(query.limit + 1).execute();
    const page = rows.slice(0, query.limit);
    const last = page[page.length - 1];
    ctx.body = { items: page.map(render), ...(rows.length > query.limit && last ? { nextCursor: encodeCursor(last.id) } : {}) };
  });

  router.post('/tenants/:clientId/tokens', async (ctx) => {
    const tenant = await scope(ctx);
    const parsed = safeParseReporting(apiTokenRequestSchema, await readJsonBody(ctx, deps.bodyLimitBytes));
    if (!parsed.success) throw fromZodError(parsed.error, 'token request');
    const expiresAt = parsed.data.expiresAt ? new Date(parsed.data.expiresAt) : null;
    const issued = await issueToken(db, { tenantId: tenant.id, name: parsed.data.name, scopes: parsed.data.scopes, expiresAt });
    const row = await db.selectFrom('api_tokens').select(columns).where('id', '=', issued.id).executeTakeFirstOrThrow();
    ctx.status = 201;
    ctx.set('Location', locationOf(ctx.path, issued.id));
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { ...render(row), token: issued.token };
  });

  router.get('/tenants/:clientId/tokens/:tokenId', async (ctx) => {
    const tenant = await scope(ctx);
    const id = resourceId('token', (ctx.params as { tokenId: string }).tokenId);
    const row = await db.selectFrom('api_tokens').select(columns).where('tenant_id', '=', tenant.id).where('id', '=', id).executeTakeFirst();
    if (!row) throw notFound(`token "${id}"`);
    ctx.body = render(row);
  });

  router.delete('/tenants/:clientId/tokens/:tokenId', async (ctx) => {
    const tenant = await scope(ctx);
    const id = resourceId('token', (ctx.params as { tokenId: string }).tokenId);
    if (!(await revokeToken(db, tenant.id, id))) throw notFound(`active token "${id}"`);
    ctx.status = 204;
  });
}
