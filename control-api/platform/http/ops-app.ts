import Koa from 'koa';
import type { Logger } from '../../../core/logger.js';
import type { Store } from '../store/database.js';
import { opsRouter, storeReadinessChecks, type ReadinessCheck } from './ops-routes.js';
import { requestLog } from './request-log.js';

export interface OpsAppDeps {
  readonly store: Store;
  readonly logger: Logger;
  readonly isDraining: () => boolean;
  /** More /readyz checks from the composition root (the platform's own start). */
  readonly readinessChecks?: Readonly<Record<string, ReadinessCheck>>;
  /** Config `ops.metricsToken`: /metrics then needs it as a bearer token. */
  readonly metricsToken?: string | undefined;
}

/**
 * /healthz, /readyz and /metrics alone, for a process that serves no other HTTP (a gateway or
 * worker on its own, config `ops.port`): its metrics and readiness need a port too.
 */
export function createOpsApp(deps: OpsAppDeps): Koa {
  const app = new Koa();
  app.proxy = false;
  app.silent = true;
  app.use(requestLog('ops', deps.logger));
  const ops = opsRouter(storeReadinessChecks(deps.store, deps.readinessChecks), deps.isDraining, { serve: true, token: deps.metricsToken });
  app.use(ops.routes()).use(ops.allowedMethods());
  return app;
}
