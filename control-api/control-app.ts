import Koa from 'koa';
import type { Logger } from '../core/logger.js';
import type { PlatformConfig } from '../core/config/schema.js';
import type { Store } from './store/database.js';
import { opsRouter } from './http/ops-routes.js';
import { requestLog } from './http/request-log.js';

export interface ControlAppDeps {
  readonly store: Store;
  readonly logger: Logger;
  readonly config: PlatformConfig;
  /** Credential that guards the management API. */
  readonly operatorToken: string;
  /** Key that encrypts secrets at rest (trunk passwords, provider credentials). */
  readonly secretKey: Buffer;
  readonly isDraining?: () => boolean;
}

/** The control API on one port: management API, campaign Twirp service, health and metrics. */
export function createControlApp(deps: ControlAppDeps): Koa {
  const app = new Koa();
  app.proxy = false;
  app.silent = true;
  app.use(requestLog('control', deps.logger));
  const ops = opsRouter({ database: async () => void (await deps.store.db.selectNoFrom((eb) => eb.lit(1).as('one')).execute()) }, deps.isDraining);
  app.use(ops.routes()).use(ops.allowedMethods());
  return app;
}
