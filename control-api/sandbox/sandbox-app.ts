import Koa from 'koa';
import type { Logger } from '../../core/logger.js';
import type { Store } from '../store/database.js';
import { opsRouter } from '../http/ops-routes.js';
import { requestLog } from '../http/request-log.js';

export interface SandboxAppDeps {
  readonly store: Store;
  readonly logger: Logger;
  /** Static bearer tokens from configuration, besides tokens issued through the management API. */
  readonly staticTokens: readonly string[];
  readonly isDraining?: () => boolean;
}

/** The plant store sandbox API ({sandbox_url}), on its own port. */
export function createSandboxApp(deps: SandboxAppDeps): Koa {
  const app = new Koa();
  app.silent = true;
  app.use(requestLog('sandbox', deps.logger));
  const ops = opsRouter({}, deps.isDraining);
  app.use(ops.routes()).use(ops.allowedMethods());
  return app;
}
