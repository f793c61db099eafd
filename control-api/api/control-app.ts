import Koa from 'koa';
import type { Logger } from '../../core/logger.js';
import type { PlatformConfig } from '../../core/config/schema.js';
import type { Store } from '../platform/store/database.js';
import { createSecretBox } from '../platform/crypto/secret-box.js';
import { resourceDefinitions } from '../model/resources/registry.js';
import type { ResourceDefinition } from '../model/resources/resource-definition.js';
import { createTenantsRepository } from '../model/tenants/tenants-repository.js';
import { systemClock } from '../../core/clock.js';
import { dashboard } from '../platform/http/dashboard.js';
import { callTokenKey } from '../platform/crypto/call-token.js';
import { downloadLinkKey } from '../features/reports/download-links.js';
import { jsonErrors } from '../platform/http/error-response.js';
import { opsRouter, storeReadinessChecks, type ReadinessCheck } from '../platform/http/ops-routes.js';
import { requestLog } from '../platform/http/request-log.js';
import { storableQuery } from '../platform/http/storable-params.js';
import { drainUnreadBody } from '../platform/http/unread-body.js';
import { sipInfoFromConfig } from './management/sip-info.js';
import { managementRouter } from './management/management-router.js';
import { callsRouter } from './calls/calls-router.js';
import { callsOpenApi, masterReportOpenApi } from './calls/call-openapi.js';
import type { RecordingStore } from '../features/calls/recording-store.js';
import { recordingsFor } from '../features/calls/recordings.js';
import { campaignService, type CampaignServiceDeps } from '../features/campaigns/campaign-service.js';
import { messageStatusOpenApi, messageStatusRouter } from './campaigns/message-status-routes.js';
import type { TenantAdmin } from '../model/tenants/tenant-admin.js';
import type { DrainControl } from './management/admin-drain.js';
import { createSimulationRuntime, type SimulationRuntime } from './simulations/simulation-runtime.js';

export interface ControlAppDeps {
  readonly store: Store;
  readonly logger: Logger;
  readonly config: PlatformConfig;
  /** Credential that guards the management API. */
  readonly operatorToken: string;
  /** Key that encrypts secrets at rest (trunk passwords, provider credentials). */
  readonly secretKey: Buffer;
  readonly isDraining?: () => boolean;
  /** More /readyz checks from the composition root (the platform's own start). */
  readonly readinessChecks?: Readonly<Record<string, ReadinessCheck>>;
  /** The process's drain, served as `/v1/admin/drain` (operator token); absent: not served. */
  readonly drain?: DrainControl;
  /** Resource kinds the management API serves, and tenant persistence; the platform's own by default. */
  readonly management?: { readonly definitions: readonly ResourceDefinition[]; readonly tenants: TenantAdmin };
  /** Where call recordings are read from; default from `config.recordings` (calls/recordings.ts). */
  readonly recordings?: RecordingStore;
  /** Campaign SendMessage wiring: the job queue that makes a stored message fire on time, a clock for tests. */
  readonly campaigns?: Pick<CampaignServiceDeps, 'enqueue' | 'clock'>;
  /**
   * Recipe simulations over HTTP. The caller owns it and closes it on shutdown; when absent one is
   * built here (its sandbox worker starts lazily and never holds the process open).
   */
  readonly simulations?: SimulationRuntime;
  /** The built dashboard (dist/dashboard), served at `/` after every API route; absent: not served. */
  readonly dashboardDir?: string;
}

/** Every resource kind of the platform and tenant persistence, sealing secrets with the platform key. */
export function platformKinds(secretKey: Buffer): { definitions: readonly ResourceDefinition[]; tenants: TenantAdmin } {
  const secretBox = createSecretBox(secretKey);
  return { definitions: resourceDefinitions({ secretBox }), tenants: createTenantsRepository(secretBox) };
}

/** The control API on one port: management API, campaign Twirp service, health and metrics. */
export function createControlApp(deps: ControlAppDeps): Koa {
  const app = new Koa();
  app.proxy = false;
  app.silent = true;
  app.use(requestLog('control', deps.logger));
  app.use(drainUnreadBody(deps.config.http.drainLimitBytes));
  app.use(jsonErrors(deps.logger));
  const ops = opsRouter(storeReadinessChecks(deps.store, deps.readinessChecks), deps.isDraining, { serve: deps.config.ops.metricsOnAppPorts, token: deps.config.ops.metricsToken });
  app.use(ops.routes()).use(ops.allowedMethods());
  // Twirp campaign service: owns everything under /api/ (Twirp error bodies, tenant from the Host).
  app.use(campaignService({ db: deps.store.db, logger: deps.logger, baseDomain: deps.config.control.baseDomain, bodyLimitBytes: deps.config.control.bodyLimitBytes, ...deps.campaigns }));
  // Below /api the Twirp service answers for itself; everything after it reads decoded query values.
  app.use(storableQuery());
  const kinds = deps.management ?? platformKinds(deps.secretKey);
  const management = managementRouter({
    db: deps.store.db,
    logger: deps.logger,
    operatorToken: deps.operatorToken,
    definitions: kinds.definitions,
    tenants: kinds.tenants,
    bodyLimitBytes: deps.config.control.bodyLimitBytes,
    openApi: [callsOpenApi, masterReportOpenApi, messageStatusOpenApi],
    sipInfo: sipInfoFromConfig(deps.config),
    baseDomain: deps.config.control.baseDomain,
    ...(deps.config.webCalls.enabled ? { webCalls: { config: deps.config, tokenKey: callTokenKey(deps.secretKey), clock: deps.campaigns?.clock ?? systemClock } } : {}),
    simulations: deps.simulations ?? createSimulationRuntime({ db: deps.store.db, box: createSecretBox(deps.secretKey), logger: deps.logger }),
    ...(deps.drain ? { drain: deps.drain } : {}),
  });
  app.use(management.routes()).use(management.allowedMethods());
  const recordings = deps.recordings ?? recordingsFor(deps.config, deps.store.db).store;
  const calls = callsRouter({ db: deps.store.db, operatorToken: deps.operatorToken, recordings, downloadKey: downloadLinkKey(deps.secretKey), ...(deps.campaigns?.clock ? { clock: deps.campaigns.clock } : {}) });
  app.use(calls.routes()).use(calls.allowedMethods());
  const messages = messageStatusRouter({ db: deps.store.db, operatorToken: deps.operatorToken });
  app.use(messages.routes()).use(messages.allowedMethods());
  if (deps.dashboardDir) app.use(dashboard(deps.dashboardDir));
  return app;
}
