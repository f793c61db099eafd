import Router from '@koa/router';
import { collectProcessMetrics, metricsRegistry } from '../../core/metrics.js';
import type { Store } from '../store/database.js';

export type ReadinessCheck = () => Promise<void>;

/** The readiness every app with the store has: the composition root's checks, then the database answering. */
export function storeReadinessChecks(store: Store, extra: Readonly<Record<string, ReadinessCheck>> = {}): Record<string, ReadinessCheck> {
  return { ...extra, database: async () => void (await store.db.selectNoFrom((eb) => eb.lit(1).as('one')).execute()) };
}

/**
 * Liveness, readiness and Prometheus metrics, mounted on every HTTP app the platform serves.
 * /healthz says the process is up; /readyz runs the checks (database reachable, not draining).
 */
export function opsRouter(checks: Readonly<Record<string, ReadinessCheck>>, isDraining: () => boolean = () => false): Router {
  // Whoever serves /metrics serves the standard process_* / nodejs_* series with it.
  collectProcessMetrics();
  const router = new Router();
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    const results: Record<string, string> = {};
    let ready = !isDraining();
    if (!ready) results['shutdown'] = 'draining';
    for (const [name, check] of Object.entries(checks)) {
      try {
        await check();
        results[name] = 'ok';
      } catch (error) {
        ready = false;
        results[name] = (error as Error).message || 'failed';
      }
    }
    ctx.status = ready ? 200 : 503;
    ctx.body = { status: ready ? 'ready' : 'not_ready', checks: results };
  });
  router.get('/metrics', async (ctx) => {
    ctx.type = metricsRegistry.contentType;
    ctx.body = await metricsRegistry.metrics();
  });
  return router;
}
