import type Router from '@koa/router';
import type Koa from 'koa';
import { systemClock, type Clock } from '../../../core/clock.js';
import { AppError } from '../../../core/errors.js';
import { scopedTenant, type CallRouteDeps } from './call-routes.js';
import { flag, parseCallFilter } from '../../features/calls/call-query.js';
import { whereFilter } from '../../features/calls/call-repository.js';
import { issueDownloadToken, verifyDownloadToken } from '../../features/reports/download-links.js';
import { masterReportCsv } from '../../features/reports/master-report.js';

/**
 * `GET /v1/tenants/:clientId/reports/master.csv`: the Master Report for the call filters of the
 * call list, streamed as `text/csv` (Options: `bom=true` for Excel, `formulaGuard=true` against
 * spreadsheet formula injection; see csv-encoder.ts.)
 *
 * `POST .../reports/master.csv/links` (same query) answers a signed link valid for a minute,
 * `GET /v1/report-downloads/:token`, which needs no header: the dashboard hands it to the browser
 * so the CSV streams to a file (download-links.ts).
 */
export interface ReportRouteDeps extends Pick<CallRouteDeps, 'db' | 'operatorToken'> {
  /** Signs download links (downloadLinkKey of the platform's secret key). */
  readonly downloadKey: Buffer;
  readonly clock?: Clock;
}

export const downloadLinkTtlMs = 60_000;
const reportOptions = ['bom', 'formulaGuard'];
type Query = Record<string, string | string[] | undefined>;

export function mountReportRoutes(router: Router, deps: ReportRouteDeps): void {
  const clock = deps.clock ?? systemClock;
  const send = async (ctx: Koa.Context, tenant: { id: string; clientId: string; timezone: string }, query: Query) => {
    const filter = parseCallFilter(query, tenant.timezone, reportOptions);
    const options = { bom: flag(query, 'bom'), formulaGuard: flag(query, 'formulaGuard') };
    const stream = await masterReportCsv(deps.db, { tenantId: tenant.id, filter }, options);
    const stamp = new Date(clock.now()).toISOString().slice(0, 19).replace(/[-:]/g, '').replace('T', '-');
    ctx.status = 200;
    ctx.type = 'text/csv; charset=utf-8; header=present';
    ctx.set('Content-Disposition', `attachment; filename="master-report-${tenant.clientId}-${stamp}.csv"`);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = stream;
  };

  router.get('/tenants/:clientId/reports/master.csv', async (ctx) => {
    const tenant = await scopedTenant(ctx, deps);
    await send(ctx, tenant, ctx.query as Query);
  });

  router.post('/tenants/:clientId/reports/master.csv/links', async (ctx) => {
    const tenant = await scopedTenant(ctx, deps);
    const query = ctx.query as Query;
    // Checked now, so a bad filter is a 400 here and not a broken download later.
    const filter = parseCallFilter(query, tenant.timezone, reportOptions);
    flag(query, 'bom');
    flag(query, 'formulaGuard');
    const counted = await whereFilter(deps.db.selectFrom('calls').where('calls.tenant_id', '=', tenant.id), filter)
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    const expiresAt = clock.now() + downloadLinkTtlMs;
    const token = issueDownloadToken(deps.downloadKey, { tenantId: tenant.id, query: ctx.querystring, expiresAt });
    ctx.status = 201;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { url: `/v1/report-downloads/${token}`, expiresAt: new Date(expiresAt).toISOString(), calls: Number(counted.n) };
  });

  router.get('/report-downloads/:token', async (ctx) => {
    const check = verifyDownloadToken(deps.downloadKey, (ctx.params as { token: string }).token, clock.now());
    if (!check.ok) {
      const message = check.why === 'expired' ? 'the download link has expired: ask for a new one' : 'not a download link issued by this platform';
      throw new AppError('unauthenticated', message);
    }
    const row = await deps.db.selectFrom('tenants').select(['id', 'client_id', 'timezone']).where('id', '=', check.claims.tenantId).executeTakeFirst();
    if (!row) throw new AppError('not_found', 'the tenant of this download link no longer exists');
    const query = Object.fromEntries(new URLSearchParams(check.claims.query).entries()) as Query;
    // Repeated parameters (outcome=a&outcome=b) come back as lists, as Koa reads them.
    for (const key of new Set(new URLSearchParams(check.claims.query).keys())) {
      const all = new URLSearchParams(check.claims.query).getAll(key);
      if (all.length > 1) query[key] = all;
    }
    await send(ctx, { id: row.id, clientId: row.client_id, timezone: row.timezone }, query);
  });
}
