import type Router from '@koa/router';
import { scopedTenant, type CallRouteDeps } from '../calls/call-routes.js';
import { flag, parseCallFilter } from '../calls/call-query.js';
import { masterReportCsv } from './master-report.js';

/**
 * `GET /v1/tenants/:clientId/reports/master.csv`: the Master Report for the call filters of the
 * call list, streamed as `text/csv` (Options: `bom=true` for Excel, `formulaGuard=true` against
 * spreadsheet formula injection; see csv-encoder.ts.)
 */
export function mountReportRoutes(router: Router, deps: Pick<CallRouteDeps, 'db' | 'operatorToken'>): void {
  router.get('/tenants/:clientId/reports/master.csv', async (ctx) => {
    const tenant = await scopedTenant(ctx, deps);
    const query = ctx.query as Record<string, string | string[] | undefined>;
    const filter = parseCallFilter(query, tenant.timezone, ['bom', 'formulaGuard']);
    const options = { bom: flag(query, 'bom'), formulaGuard: flag(query, 'formulaGuard') };
    const stream = await masterReportCsv(deps.db, { tenantId: tenant.id, filter }, options);
    const stamp = new Date().toISOString().slice(0, 19).replace(/[-:]/g, '').replace('T', '-');
    ctx.status = 200;
    ctx.type = 'text/csv; charset=utf-8; header=present';
    ctx.set('Content-Disposition', `attachment; filename="master-report-${tenant.clientId}-${stamp}.csv"`);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = stream;
  });
}
