import { createSandboxApp } from '../../control-api/api/sandbox/sandbox-app.js';
import { serve } from '../../control-api/platform/http/serve.js';
import type { RoleStarter } from './role.js';

export const startSandboxRole: RoleStarter = async (ctx) => {
  const { config, logger } = ctx;
  const app = createSandboxApp({
    store: ctx.store,
    logger: logger.child({ role: 'sandbox' }),
    staticTokens: config.sandbox.tokens,
    isDraining: ctx.isDraining,
    readinessChecks: ctx.readinessChecks,
    drainLimitBytes: config.http.drainLimitBytes,
    metrics: { serve: config.ops.metricsOnAppPorts, token: config.ops.metricsToken },
  });
  const running = await serve(app, config.sandbox.host, config.sandbox.port, { name: 'plant sandbox', http: config.http });
  logger.info({ role: 'sandbox', url: running.url, port: running.port }, 'plant sandbox listening');
  return { name: 'sandbox', stop: (graceMs) => running.close(graceMs) };
};
