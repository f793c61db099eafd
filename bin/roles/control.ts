import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createControlApp } from '../../control-api/api/control-app.js';
import { isBuiltDashboard } from '../../control-api/platform/http/dashboard.js';
import { serve } from '../../control-api/platform/http/serve.js';
import { campaignEnqueuer } from '../../control-api/features/campaigns/campaign-worker.js';
import { createSecretBox } from '../../control-api/platform/crypto/secret-box.js';
import { createSimulationRuntime } from '../../control-api/api/simulations/simulation-runtime.js';
import type { RoleStarter } from './role.js';

/**
 * The built dashboard: dist/dashboard beside dist/bin when this runs compiled, or the repository's
 * dist/dashboard when the sources run under tsx (tests). Undefined when it was never built.
 */
export function builtDashboardDir(): string | undefined {
  const here = dirname(fileURLToPath(import.meta.url));
  return [join(here, '..', '..', 'dashboard'), join(here, '..', '..', 'dist', 'dashboard')].find(isBuiltDashboard);
}

export const startControlRole: RoleStarter = async (ctx) => {
  const { config, logger } = ctx;
  // On PostgreSQL, SendMessage schedules an Agenda job for the due time (scheduling-only instance).
  const jobs = await campaignEnqueuer(ctx.store, logger.child({ role: 'control' }));
  const simulations = createSimulationRuntime({ db: ctx.store.db, box: createSecretBox(ctx.secrets.secretKey), logger: logger.child({ role: 'control', part: 'simulations' }) });
  const dashboardDir = builtDashboardDir();
  if (!dashboardDir) logger.warn({ role: 'control' }, 'the dashboard is not built (npm run build): / serves nothing, the API is unaffected');
  const app = createControlApp({
    store: ctx.store,
    logger: logger.child({ role: 'control' }),
    config,
    operatorToken: ctx.secrets.operatorToken,
    secretKey: ctx.secrets.secretKey,
    isDraining: ctx.isDraining,
    readinessChecks: ctx.readinessChecks,
    drain: ctx.drain,
    simulations,
    ...(dashboardDir ? { dashboardDir } : {}),
    ...(jobs ? { campaigns: { enqueue: (id: string, at: number) => jobs.enqueue(id, at) } } : {}),
  });
  const running = await serve(app, config.control.host, config.control.port, { name: 'control API', http: config.http }).catch(async (error: unknown) => {
    await jobs?.close();
    await simulations.close();
    throw error;
  });
  logger.info({ role: 'control', url: running.url, port: running.port, dashboard: dashboardDir !== undefined }, 'control API listening');
  return {
    name: 'control',
    stop: async (graceMs) => {
      await running.close(graceMs);
      await jobs?.close();
      await simulations.close();
    },
  };
};
