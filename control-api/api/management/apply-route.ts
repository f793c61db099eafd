import type Router from '@koa/router';
import { AppError } from '../../../core/errors.js';
import type { ApplyService } from '../apply/apply-service.js';
import { jsonDocuments, splitYaml } from '../apply/parse-documents.js';
import { parseJson, readRawBody } from '../../platform/http/read-body.js';
import { authenticate } from '../route-kit/auth.js';
import type { ManagementDeps } from '../route-kit/management-deps.js';

function dryRunFlag(value: string | string[] | undefined): boolean {
  if (value === undefined) return false;
  if (value === 'true' || value === '1' || value === '') return true;
  if (value === 'false' || value === '0') return false;
  throw new AppError('invalid_argument', 'dryRun must be true or false', { issues: [{ path: 'dryRun', message: 'must be true or false' }] });
}

/**
 * `POST /apply`: the same documents `npm run cli -- apply` reads, as YAML or JSON. The operator may
 * apply anything; a tenant token only resource documents of its own tenant.
 */
export function mountApplyRoute(router: Router, deps: ManagementDeps, service: ApplyService): void {
  router.post('/apply', async (ctx) => {
    const principal = await authenticate(ctx, deps.db, deps.operatorToken);
    // A misspelt `?dryrun=true` must not silently apply for real.
    for (const name of Object.keys(ctx.query)) {
      if (name !== 'dryRun') {
        throw new AppError('invalid_argument', `unknown query parameter "${name}" (allowed: dryRun)`, { issues: [{ path: name, message: 'unknown query parameter' }] });
      }
    }
    const dryRun = dryRunFlag(ctx.query['dryRun']);
    const raw = await readRawBody(ctx, { limitBytes: deps.bodyLimitBytes, accept: ['yaml', 'json'] });
    const documents = raw.format === 'json' ? jsonDocuments(parseJson(raw.text)) : splitYaml(raw.text);
    const scope = principal.kind === 'tenant' ? { onlyTenantId: principal.tenantId } : undefined;
    ctx.body = await service.apply(documents, { dryRun, ...(scope ? { scope } : {}) });
  });
}
