import Router from '@koa/router';
import type { BearerAuthenticator } from './bearer-auth.js';
import { PlantApiError, badRequest } from './plant-errors.js';
import type { PlantRepository } from './plant-repository.js';
import { readJsonBody, toLimit, toNewPlant, toPlantId } from './plant-request.js';

/**
 * The spec's three plant store operations. Order of checks: route and method, then the bearer
 * token (401 before anything about the body), then the request itself.
 */
export function plantRouter(auth: BearerAuthenticator, plants: PlantRepository): Router {
  const router = new Router();

  router.get('/plants', async (ctx) => {
    const owner = await auth.authenticate(ctx.get('Authorization') || undefined);
    const limit = toLimit(ctx.query);
    ctx.body = await plants.list(owner, limit);
  });

  router.post('/plants', async (ctx) => {
    const owner = await auth.authenticate(ctx.get('Authorization') || undefined);
    const plant = toNewPlant(await readJsonBody(ctx));
    const stored = await plants.create(owner, plant);
    if (!stored) throw badRequest(`a plant with id ${plant.id} already exists`);
    ctx.body = stored;
  });

  router.delete('/plants/:id', async (ctx) => {
    const owner = await auth.authenticate(ctx.get('Authorization') || undefined);
    const id = toPlantId(ctx.params['id'] ?? '');
    // Another owner's plant answers 404 too: ids of others are not disclosed.
    if (!(await plants.delete(owner, id))) throw new PlantApiError(404, `plant ${id} not found`);
    ctx.status = 204;
  });

  return router;
}

/**
 * Answers 405 with an Allow header (RFC 9110 sec. 15.5.6) when a path exists under another method.
 * Runs after the routers, so it only sees requests none of them handled.
 */
export function methodNotAllowed(routers: readonly Router[]): (ctx: { path: string; method: string; status: number; body: unknown }) => void {
  return (ctx) => {
    if (ctx.status !== 404 || (ctx.body !== null && ctx.body !== undefined)) return;
    const allowed = new Set<string>();
    for (const router of routers) {
      for (const layer of router.match(ctx.path, ctx.method).path) for (const m of layer.methods) allowed.add(m);
    }
    if (allowed.size === 0) return;
    const list = [...allowed].sort().join(', ');
    throw new PlantApiError(405, `method ${ctx.method} not allowed on ${ctx.path}; allowed: ${list}`, { Allow: list });
  };
}
