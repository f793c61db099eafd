import Router from '@koa/router';
import { guardPathParameters } from '../../platform/http/storable-params.js';
import { mountReportRoutes, type ReportRouteDeps } from './report-routes.js';
import { mountCallRoutes, type CallRouteDeps } from './call-routes.js';

/**
 * Call records and the Master Report, beside the management API under `/v1` (same tokens, same
 * errors). Mount with `app.use(r.routes()).use(r.allowedMethods())`.
 */
export function callsRouter(deps: CallRouteDeps & ReportRouteDeps): Router {
  const router = new Router({ prefix: '/v1' });
  mountCallRoutes(router, deps);
  mountReportRoutes(router, deps);
  return guardPathParameters(router);
}
