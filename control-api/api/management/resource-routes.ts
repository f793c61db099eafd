import type Router from '@koa/router';
import type Koa from 'koa';
import { AppError, notFound } from '../../../core/errors.js';
import type { ResourceDefinition, StoredResource } from '../../model/resources/resource-definition.js';
import { safeParseReporting } from '../../platform/validation.js';
import { fromZodError } from '../../platform/http/error-response.js';
import { readJsonBody } from '../../platform/http/read-body.js';
import { authenticate } from '../route-kit/auth.js';
import { listFilterKinds, listPage, listPredicate, parseListQuery } from '../route-kit/list-query.js';
import { isObject, mergePatch } from './merge-patch.js';
import type { ManagementDeps } from '../route-kit/management-deps.js';
import { locationOf } from './location.js';
import { tenantInScope, type TenantRef } from '../route-kit/tenant-scope.js';

/** The wire form of a stored resource: the spec as the kind's schema describes it, plus identity. */
export interface ResourceBody {
  readonly id: string;
  readonly kind: string;
  readonly tenant: string;
  readonly spec: unknown;
  readonly createdAt: string;
  readonly updatedAt: string;
  /** Only for kinds with built-ins: true for a platform-provided resource, which cannot be changed. */
  readonly builtIn?: boolean;
}

export const renderResource = (kind: string, tenant: TenantRef, stored: StoredResource): ResourceBody => ({
  id: stored.id,
  kind,
  tenant: tenant.clientId,
  spec: stored.spec,
  createdAt: stored.createdAt.toISOString(),
  updatedAt: stored.updatedAt.toISOString(),
  ...(stored.builtIn === undefined ? {} : { builtIn: stored.builtIn }),
});

// Resource ids are UUIDs; anything else cannot exist, and must not reach the database as a cast error.
const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function resourceId(kind: string, id: string): string {
  if (!uuidPattern.test(id)) throw notFound(`${kind} "${id}"`);
  return id;
}

type Params = { clientId: string; id?: string };

/** CRUD for one kind under `/tenants/:clientId/<plural>`; identical for every kind. */
export function mountResourceRoutes(router: Router, deps: ManagementDeps, definition: ResourceDefinition): void {
  const { db } = deps;
  const filterable = listFilterKinds(definition);
  const collection = `/tenants/:clientId/${definition.plural}`;
  const item = `${collection}/:id`;

  const scope = async (ctx: Koa.Context): Promise<TenantRef> => {
    const principal = await authenticate(ctx, db, deps.operatorToken);
    return tenantInScope(db, principal, (ctx.params as Params).clientId, ctx);
  };
  const validate = (body: unknown): unknown => {
    const parsed = safeParseReporting(definition.schema, body);
    if (!parsed.success) throw fromZodError(parsed.error, `${definition.kind} spec`);
    return parsed.data;
  };
  const parseSpec = async (ctx: Koa.Context): Promise<unknown> => validate(await readJsonBody(ctx, deps.bodyLimitBytes));
  const load = async (tenant: TenantRef, ctx: Koa.Context): Promise<StoredResource> => {
    const id = resourceId(definition.kind, (ctx.params as Params).id ?? '');
    const stored = await definition.repository.get(db, tenant.id, id);
    if (!stored) throw notFound(`${definition.kind} "${id}"`);
    return stored;
  };

  router.get(collection, async (ctx) => {
    const tenant = await scope(ctx);
    const query = parseListQuery(ctx.query, filterable);
    const page = await listPage(db, definition.repository, tenant.id, query, listPredicate(definition, query));
    ctx.body = { items: page.items.map((r) => renderResource(definition.kind, tenant, r)), ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
  });

  router.post(collection, async (ctx) => {
    const tenant = await scope(ctx);
    const spec = await parseSpec(ctx);
    const created = await definition.repository.create(db, tenant.id, spec);
    ctx.status = 201;
    ctx.set('Location', locationOf(ctx.path, created.id));
    ctx.body = renderResource(definition.kind, tenant, created);
  });

  router.get(item, async (ctx) => {
    const tenant = await scope(ctx);
    ctx.body = renderResource(definition.kind, tenant, await load(tenant, ctx));
  });

  router.put(item, async (ctx) => {
    const tenant = await scope(ctx);
    const stored = await load(tenant, ctx);
    const spec = await parseSpec(ctx);
    ctx.body = renderResource(definition.kind, tenant, await definition.repository.update(db, tenant.id, stored.id, spec));
  });

  // JSON Merge Patch (RFC 7396) over the stored spec: the dashboard's toggles (a number's status,
  // a campaign's Publish, a voice's star) without resending the whole resource. Secrets read back
  // masked, so the merged spec keeps them; the result is validated and stored like a PUT.
  router.patch(item, async (ctx) => {
    const tenant = await scope(ctx);
    const stored = await load(tenant, ctx);
    const patch = await readJsonBody(ctx, deps.bodyLimitBytes);
    if (!isObject(patch)) {
      throw new AppError('invalid_argument', 'a merge patch must be a JSON object (RFC 7396); send the whole spec with PUT instead', {
        issues: [{ path: '', message: 'a merge patch must be a JSON object' }],
      });
    }
    const spec = validate(mergePatch(stored.spec, patch));
    ctx.body = renderResource(definition.kind, tenant, await definition.repository.update(db, tenant.id, stored.id, spec));
  });

  router.delete(item, async (ctx) => {
    const tenant = await scope(ctx);
    const stored = await load(tenant, ctx);
    await definition.repository.delete(db, tenant.id, stored.id);
    ctx.status = 204;
  });
}
