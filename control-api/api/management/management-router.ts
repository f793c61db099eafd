import Router from '@koa/router';
import { createApplyService } from '../apply/apply-service.js';
import { adminDrainOpenApi, mountAdminDrainRoutes, type DrainControl } from './admin-drain.js';
import { guardPathParameters } from '../../platform/http/storable-params.js';
import { simulationOpenApi } from '../simulations/simulation-openapi.js';
import { mountSimulationRoutes, type SimulationRouteDeps } from '../simulations/simulation-routes.js';
import { mountApplyRoute } from './apply-route.js';
import type { ManagementDeps } from '../route-kit/management-deps.js';
import type { OpenApiContribution } from '../route-kit/openapi/builder.js';
import { buildManagementOpenApi } from './openapi/document.js';
import { mountResourceRoutes } from './resource-routes.js';
import { mountSipInfoRoute, sipInfoOpenApi, type SipInfo } from './sip-info.js';
import { mountTrunkRegistrationRoute, trunkRegistrationOpenApi } from './trunk-registrations.js';
import type { TenantAdmin } from '../../model/tenants/tenant-admin.js';
import { mountTenantRoutes } from './tenant-routes.js';
import { mountTokenRoutes } from './token-routes.js';
import { mountWhoamiRoute, whoamiOpenApi } from './whoami.js';
import { endpointsOpenApi, mountEndpointsRoute } from '../route-kit/endpoints.js';
import { mountWebCallRoutes, webCallOpenApi, type WebCallRouteDeps } from '../webcalls/web-call-routes.js';

export interface ManagementRouterDeps extends ManagementDeps {
  readonly tenants: TenantAdmin;
  /** Recipe simulations over HTTP (`/v1/tenants/{clientId}/simulations`); absent: not served. */
  readonly simulations?: Pick<SimulationRouteDeps, 'sessions' | 'services'>;
  /** Path items of routes mounted beside this router under `/v1` (calls, reports), for the document. */
  readonly openApi?: readonly OpenApiContribution[];
  /** The service's SIP address and ports for custom trunks (`GET .../sip-info`); absent: not served. */
  readonly sipInfo?: SipInfo;
  /** The process's drain (`/v1/admin/drain`); absent: not served. */
  readonly drain?: DrainControl;
  /** `control.baseDomain`: tenants are `<clientId>.<baseDomain>` (`GET .../endpoints`); absent: not served. */
  readonly baseDomain?: string;
  /** Call tokens for web calls (`POST .../web-calls`); absent: not served. */
  readonly webCalls?: Omit<WebCallRouteDeps, keyof ManagementDeps>;
}

/**
 * The versioned management API under `/v1`: tenants, their tokens, one identical set of CRUD
 * routes per resource definition, `POST /v1/apply`, recipe simulations and the OpenAPI document
 * built from the same schemas. Mount with `app.use(r.routes()).use(r.allowedMethods())`.
 */
export function managementRouter(deps: ManagementRouterDeps): Router {
  const kinds = new Set<string>();
  for (const d of deps.definitions) {
    if (kinds.has(d.plural) || d.plural === 'tokens' || d.plural === 'sip-info' || d.plural === 'sip-trunk-registrations' || d.plural === 'endpoints' || d.plural === 'web-calls') throw new Error(`resource path "${d.plural}" is defined twice`);
    kinds.add(d.plural);
  }
  const router = new Router({ prefix: '/v1' });
  const document = buildManagementOpenApi(deps.definitions, [
    whoamiOpenApi,
    ...(deps.openApi ?? []),
    ...(deps.simulations ? [simulationOpenApi] : []),
    ...(deps.sipInfo ? [sipInfoOpenApi] : []),
    trunkRegistrationOpenApi,
    ...(deps.drain ? [adminDrainOpenApi] : []),
    ...(deps.baseDomain !== undefined ? [endpointsOpenApi] : []),
    ...(deps.webCalls ? [webCallOpenApi] : []),
  ]);
  router.get('/openapi.json', (ctx) => {
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = document;
  });
  mountWhoamiRoute(router, deps);
  mountTenantRoutes(router, deps, deps.tenants);
  mountTokenRoutes(router, deps);
  for (const definition of deps.definitions) mountResourceRoutes(router, deps, definition);
  if (deps.sipInfo) mountSipInfoRoute(router, deps, deps.sipInfo);
  mountTrunkRegistrationRoute(router, deps);
  if (deps.baseDomain !== undefined) mountEndpointsRoute(router, deps, deps.baseDomain);
  if (deps.webCalls) mountWebCallRoutes(router, { ...deps, ...deps.webCalls });
  if (deps.drain) mountAdminDrainRoutes(router, deps, deps.drain);
  mountApplyRoute(router, deps, createApplyService(deps.db, deps.definitions, deps.tenants));
  if (deps.simulations) {
    mountSimulationRoutes(router, { db: deps.db, operatorToken: deps.operatorToken, bodyLimitBytes: deps.bodyLimitBytes, ...deps.simulations });
  }
  return guardPathParameters(router);
}
