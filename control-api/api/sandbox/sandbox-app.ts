import Router from '@koa/router';
import Koa from 'koa';
import type { Logger } from '../../../core/logger.js';
import type { Store } from '../../platform/store/database.js';
import { opsRouter, storeReadinessChecks, type MetricsAccess, type ReadinessCheck } from '../../platform/http/ops-routes.js';
import { requestLog } from '../../platform/http/request-log.js';
import { defaultHttpSettings } from '../../platform/http/serve.js';
import { drainUnreadBody } from '../../platform/http/unread-body.js';
import { bearerAuthenticator } from './bearer-auth.js';
import { plantStoreOpenApi } from './openapi-document.js';
import { plantErrorHandler } from './plant-errors.js';
import { PlantRepository } from './plant-repository.js';
import { methodNotAllowed, plantRouter } from './plant-routes.js';

export interface SandboxAppDeps {
  readonly store: Store;
  readonly logger: Logger;
  /** Static bearer tokens from configuration, besides tokens issued through the management API. */
  readonly staticTokens: readonly string[];
  readonly isDraining?: () => boolean;
  /** More /readyz checks from the composition root (the platform's own start). */
  readonly readinessChecks?: Readonly<Record<string, ReadinessCheck>>;
  /** Config `http.drainLimitBytes`: how much of an upload refused unread is read away (unread-body.ts). */
  readonly drainLimitBytes?: number;
  /** Whether /metrics is served here and the token it needs (ops-routes.ts); default served, open. */
  readonly metrics?: MetricsAccess;
}

/** The plant store sandbox API ({sandbox_url}), on its own port. */
export function createSandboxApp(deps: SandboxAppDeps): Koa {
  const app = new Koa();
  app.proxy = false;
  app.silent = true;
  const ops = opsRouter(storeReadinessChecks(deps.store, deps.readinessChecks), deps.isDraining, deps.metrics);
  const docs = new Router().get('/openapi.json', (ctx) => {
    ctx.body = plantStoreOpenApi;
  });
  const plants = plantRouter(bearerAuthenticator(deps.store.db, deps.staticTokens), new PlantRepository(deps.store.db));
  const notAllowed = methodNotAllowed([ops, docs, plants]);

  app.use(requestLog('sandbox', deps.logger));
  app.use(drainUnreadBody(deps.drainLimitBytes ?? defaultHttpSettings.drainLimitBytes));
  app.use(plantErrorHandler(deps.logger));
  app.use(async (ctx, next) => {
    await next();
    notAllowed(ctx);
  });
  app.use(ops.routes());
  app.use(docs.routes());
  app.use(plants.routes());
  return app;
}
