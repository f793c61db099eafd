import type Router from '@koa/router';
import type Koa from 'koa';
import { AppError, notFound } from '../../../core/errors.js';
import { tenantRequestSchema, tenantUpdateRequestSchema } from '../../model/domain/tenant.js';
import { safeParseReporting } from '../../platform/validation.js';
import type { StoredResource } from '../../model/resources/resource-definition.js';
import type { TenantSpec, TenantUpdate } from '../../model/domain/tenant.js';
import { fromZodError } from '../../platform/http/error-response.js';
import { readJsonBody } from '../../platform/http/read-body.js';
import { authenticate, reaches, requireOperator, type Principal } from '../route-kit/auth.js';
import { parseListQuery } from '../route-kit/list-query.js';
import type { ManagementDeps } from '../route-kit/management-deps.js';
import { locationOf } from './location.js';
import { isObject, mergePatch } from './merge-patch.js';
import type { TenantAdmin } from '../../model/tenants/tenant-admin.js';

export interface TenantBody {
  readonly id: string;
  readonly kind: 'Tenant';
  readonly spec: unknown;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export const renderTenant = (stored: StoredResource<TenantSpec>): TenantBody => ({
  id: stored.id,
  kind: 'Tenant',
  spec: stored.spec,
  createdAt: stored.createdAt.toISOString(),
  updatedAt: stored.updatedAt.toISOString(),
});

/** Dotted paths a merge patch sets to null (`settings.webhookSecret`): what it removes. */
function nullPaths(patch: Record<string, unknown>, prefix = ''): string[] {
  return Object.entries(patch).flatMap(([key, value]) => {
    const path = prefix ? `${prefix}.${key}` : key;
    if (value === null) return [path];
    return isObject(value) ? nullPaths(value, path) : [];
  });
}

/** `/tenants` (operator only) and `/tenants/:clientId` (a tenant token reads and edits its own). */
export function mountTenantRoutes(router: Router, deps: ManagementDeps, tenants: TenantAdmin): void {
  const { db } = deps;
  const load = async (ctx: Koa.Context): Promise<{ principal: Principal; stored: StoredResource<TenantSpec> }> => {
    const principal = await authenticate(ctx, db, deps.operatorToken);
    const clientId = (ctx.params as { clientId: string }).clientId;
    const stored = await tenants.findByClientId(db, clientId);
    if (!stored || !reaches(principal, stored.id)) throw notFound(`tenant "${clientId}"`);
    return { principal, stored };
  };

  router.get('/tenants', async (ctx) => {
    requireOperator(await authenticate(ctx, db, deps.operatorToken), 'list tenants');
    const query = parseListQuery(ctx.query, {});
    const page = await tenants.list(db, { limit: query.limit, ...(query.cursor ? { cursor: query.cursor } : {}) });
    ctx.body = { items: page.items.map(renderTenant), ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
  });

  router.post('/tenants', async (ctx) => {
    requireOperator(await authenticate(ctx, db, deps.operatorToken), 'create tenants');
    const parsed = safeParseReporting(tenantRequestSchema, await readJsonBody(ctx, deps.bodyLimitBytes));
    if (!parsed.success) throw fromZodError(parsed.error, 'tenant');
    const created = await tenants.create(db, parsed.data);
    ctx.status = 201;
    ctx.set('Location', locationOf(ctx.path, created.spec.clientId));
    ctx.body = renderTenant(created);
  });

  router.get('/tenants/:clientId', async (ctx) => {
    ctx.body = renderTenant((await load(ctx)).stored);
  });

  /** Validates a replacement body; a `clientId` (as read back from GET) is accepted when it matches. */
  const replacement = (stored: StoredResource<TenantSpec>, body: unknown): TenantUpdate => {
    const fields = isObject(body) ? { ...body } : body;
    if (isObject(fields) && 'clientId' in fields) {
      if (fields['clientId'] !== stored.spec.clientId) {
        throw new AppError('invalid_argument', 'invalid tenant: clientId cannot change', { issues: [{ path: 'clientId', message: 'clientId cannot change' }] });
      }
      delete fields['clientId'];
    }
    const parsed = safeParseReporting(tenantUpdateRequestSchema, fields);
    if (!parsed.success) throw fromZodError(parsed.error, 'tenant');
    return parsed.data;
  };

  router.put('/tenants/:clientId', async (ctx) => {
    const { stored } = await load(ctx);
    const body = await readJsonBody(ctx, deps.bodyLimitBytes);
    ctx.body = renderTenant(await tenants.update(db, stored.id, replacement(stored, body)));
  });

  // JSON Merge Patch (RFC 7396) over the stored tenant, like the resource kinds' PATCH: masked
  // secrets in the stored spec keep their values.
  router.patch('/tenants/:clientId', async (ctx) => {
    const { stored } = await load(ctx);
    const patch = await readJsonBody(ctx, deps.bodyLimitBytes);
    if (!isObject(patch)) {
      throw new AppError('invalid_argument', 'a merge patch must be a JSON object (RFC 7396); send the whole tenant with PUT instead', {
        issues: [{ path: '', message: 'a merge patch must be a JSON object' }],
      });
    }
    ctx.body = renderTenant(await tenants.update(db, stored.id, replacement(stored, mergePatch(stored.spec, patch)), nullPaths(patch)));
  });

  router.delete('/tenants/:clientId', async (ctx) => {
    const { principal, stored } = await load(ctx);
    requireOperator(principal, 'delete tenants');
    await tenants.delete(db, stored.id);
    ctx.status = 204;
  });
}
