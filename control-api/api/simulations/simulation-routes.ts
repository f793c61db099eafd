import type Router from '@koa/router';
import type Koa from 'koa';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import { notFound } from '../../../core/errors.js';
import { strictDeep } from '../../model/domain/strict.js';
import { safeParseReporting } from '../../platform/validation.js';
import { fromZodError } from '../../platform/http/error-response.js';
import { readJsonBody } from '../../platform/http/read-body.js';
import { authenticate } from '../route-kit/auth.js';
import { tenantInScope, type TenantRef } from '../route-kit/tenant-scope.js';
import type { Database } from '../../platform/store/schema.js';
import { validRecipeSchema } from '../../model/recipes/recipe-graph.js';
import type { Recipe } from '../../model/recipes/recipe-schema.js';
import type { RuntimeServices } from '../../features/recipes/runtime/services.js';
import { callerTurnSchema } from '../../features/recipes/simulator/scenario-schema.js';
import { toCallerTurn } from '../../features/recipes/simulator/simulation.js';
import type { SimulationSessions } from '../../features/recipes/simulator/simulation-sessions.js';

/**
 * Management API routes for chatting with a recipe over HTTP (the dashboard's test panel):
 *   POST   /tenants/:clientId/simulations            {recipe: name} | {document: Recipe}, variables?
 *   POST   /tenants/:clientId/simulations/:id/turns  "text" | {say} | {dtmf} | {silence} | {hangup}
 *   GET    /tenants/:clientId/simulations/:id        transcript, variables, path, status
 *   DELETE /tenants/:clientId/simulations/:id
 * Same authentication and tenant scoping as the rest of the management API.
 */
export interface SimulationRouteDeps {
  readonly db: Kysely<Database>;
  readonly operatorToken: string;
  readonly bodyLimitBytes: number;
  readonly sessions: SimulationSessions;
  /** The tenant's runtime services (engine, SSRF-safe HTTP, sandbox, knowledge, auth profiles). */
  readonly services: (tenant: TenantRef) => RuntimeServices | Promise<RuntimeServices>;
}

const scalar = z.union([z.string().max(10_000), z.number(), z.boolean()]);
/** `POST .../simulations` body (also the OpenAPI request schema). */
export const simulationStartSchema = z
  .object({
    recipe: z.string().min(1).optional(),
    document: z.unknown().optional(),
    variables: z.record(z.string(), scalar).default({}),
    callerNumber: z.string().max(32).optional(),
  })
  .strict()
  .refine((b) => (b.recipe === undefined) !== (b.document === undefined), { error: 'give exactly one of recipe (a stored recipe name) or document' });

/**
 * An unsaved recipe is parsed exactly like `POST /recipes` and apply parse one: unknown fields at
 * any depth are refused, so a misspelt setting fails here instead of simulating with its default.
 */
const recipeDocumentSchema = strictDeep(validRecipeSchema);

type Params = { clientId: string; id?: string };

export function mountSimulationRoutes(router: Router, deps: SimulationRouteDeps): void {
  const scope = async (ctx: Koa.Context): Promise<TenantRef> => {
    const principal = await authenticate(ctx, deps.db, deps.operatorToken);
    return tenantInScope(deps.db, principal, (ctx.params as Params).clientId, ctx);
  };
  const collection = '/tenants/:clientId/simulations';

  router.post(collection, async (ctx) => {
    const tenant = await scope(ctx);
    const parsed = simulationStartSchema.safeParse(await readJsonBody(ctx, deps.bodyLimitBytes));
    if (!parsed.success) throw fromZodError(parsed.error, 'simulation request');
    const body = parsed.data;
    let recipe: Recipe;
    if (body.document !== undefined) {
      const doc = safeParseReporting(recipeDocumentSchema, body.document);
      if (!doc.success) throw fromZodError(doc.error, 'recipe document', 'document');
      recipe = doc.data;
    } else {
      const row = await deps.db.selectFrom('recipes').select('spec').where('tenant_id', '=', tenant.id).where('name', '=', body.recipe ?? '').executeTakeFirst();
      if (!row) throw notFound(`recipe "${body.recipe}"`);
      recipe = row.spec as Recipe;
    }
    const tenantRow = await deps.db.selectFrom('tenants').select(['name', 'timezone']).where('id', '=', tenant.id).executeTakeFirstOrThrow();
    const view = await deps.sessions.start(
      tenant.id,
      recipe,
      {
        callId: `simulation-${Date.now()}`,
        tenantId: tenant.id,
        tenantName: tenantRow.name,
        timezone: tenantRow.timezone,
        callerNumber: body.callerNumber,
        direction: 'simulation',
        campaignVariables: body.variables,
        now: () => Date.now(),
      },
      await deps.services(tenant),
    );
    ctx.status = 201;
    ctx.body = view;
  });

  router.post(`${collection}/:id/turns`, async (ctx) => {
    const tenant = await scope(ctx);
    const parsed = callerTurnSchema.safeParse(await readJsonBody(ctx, deps.bodyLimitBytes));
    if (!parsed.success) throw fromZodError(parsed.error, 'caller turn');
    ctx.body = await deps.sessions.turn(tenant.id, (ctx.params as Params).id ?? '', toCallerTurn(parsed.data));
  });

  router.get(`${collection}/:id`, async (ctx) => {
    const tenant = await scope(ctx);
    ctx.body = deps.sessions.detail(tenant.id, (ctx.params as Params).id ?? '');
  });

  router.delete(`${collection}/:id`, async (ctx) => {
    const tenant = await scope(ctx);
    await deps.sessions.end(tenant.id, (ctx.params as Params).id ?? '');
    ctx.status = 204;
  });
}
