import { createControlApp } from '../../control-api/control-app.js';
import { serve } from '../../control-api/http/serve.js';
import type { RoleStarter } from './role.js';

export const startControlRole: RoleStarter = async (ctx) => {
  const { config, logger } = ctx;
  const app = createControlApp({
    store: ctx.store,
    logger: logger.child({ role: 'control' }),
    config,
    operatorToken: ctx.secrets.operatorToken,
    secretKey: ctx.secrets.secretKey,
    isDraining: ctx.isDraining,
  });
  const running = await serve(app, config.control.host, config.control.port);
  logger.info({ role: 'control', url: running.url, port: running.port }, 'control API listening');
  return { name: 'control', stop: (graceMs) => running.close(graceMs) };
};
