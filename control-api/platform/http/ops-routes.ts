import { createHash, timingSafeEqual } from 'node:crypto';
import Router from '@koa/router';
import { collectProcessMetrics, metricsRegistry } from '../../../core/metrics.js';
import type { Store } from '../store/database.js';

export type ReadinessCheck = () => Promise<void>;

/** The readiness every app with the store has: the composition root's checks, then the database answering. */
export function storeReadinessChecks(store: Store, extra: Readonly<Record<string, ReadinessCheck>> = {}): Record<string, ReadinessCheck> {
  return { ...extra, database: async () => void (await store.db.selectNoFrom((eb) => eb.lit(1).as('one')).execute()) };
}

/** Whether this port serves /metrics, and the bearer token it then requires (config `ops.metricsOnAppPorts`, `ops.metricsToken`). */
export interface MetricsAccess {
  readonly serve: boolean;
  readonly token?: string | undefined;
}

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

/** `Authorization: Bearer <token>` compared in constant time (digests, so the length leaks nothing either). */
function bearerMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header ?? '');
  return m !== null && timingSafeEqual(digest(m[1] as string), digest(token));
}

/**
 * Liveness, readiness and Prometheus metrics, mounted on every HTTP app the platform serves.
 * /healthz says the process is up; /readyz runs the checks (database reachable, not draining).
 * /metrics names tenants and trunks in its labels: an operator keeps it off the public ports
 * (`metrics.serve` false, served on ops.port alone) or behind a bearer token.
 */
export function opsRouter(checks: Readonly<Record<string, ReadinessCheck>>, isDraining: () => boolean = () => false, metrics: MetricsAccess = { serve: true }): Router {
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
  if (!metrics.serve) return router;
  const token = metrics.token;
  router.get('/metrics', async (ctx) => {
    if (token !== undefined && !bearerMatches(ctx.get('authorization'), token)) {
      ctx.status = 401;
      ctx.set('WWW-Authenticate', 'Bearer realm="metrics"');
      ctx.body = { error: { code: 'unauthenticated', message: '/metrics needs the bearer token of ops.metricsToken' } };
      return;
    }
    ctx.type = metricsRegistry.contentType;
    ctx.body = await metricsRegistry.metrics();
  });
  return router;
}
