import type Router from '@koa/router';
import { z } from 'zod';
import { authenticate } from '../route-kit/auth.js';
import type { ManagementDeps } from '../route-kit/management-deps.js';
import type { OpenApiBuilder } from '../route-kit/openapi/builder.js';
import { sharedTags } from '../route-kit/openapi/operations.js';

/**
 * Who a token belongs to: the dashboard signs in with a token alone and must learn whether it holds
 * the operator credential (then it lists tenants) or a tenant's management token (then it opens
 * that tenant). Nothing a caller could not already learn by trying the token on the tenant's paths.
 */
export const whoamiSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('operator').describe('The operator token: reaches every tenant') }),
  z.object({
    kind: z.literal('tenant').describe('A tenant API token with the management scope'),
    clientId: z.string().describe('The client ID of the tenant the token belongs to'),
    tokenId: z.string().describe('The token\'s id (GET .../tokens/{tokenId})'),
  }),
]);
export type Whoami = z.infer<typeof whoamiSchema>;

/** `GET /v1/whoami`. */
export function mountWhoamiRoute(router: Router, deps: ManagementDeps): void {
  router.get('/whoami', async (ctx) => {
    const principal = await authenticate(ctx, deps.db, deps.operatorToken);
    ctx.set('Cache-Control', 'no-store');
    if (principal.kind === 'operator') {
      ctx.body = { kind: 'operator' } satisfies Whoami;
      return;
    }
    const tenant = await deps.db.selectFrom('tenants').select('client_id').where('id', '=', principal.tenantId).executeTakeFirstOrThrow();
    ctx.body = { kind: 'tenant', clientId: tenant.client_id, tokenId: principal.tokenId } satisfies Whoami;
  });
}

/** The route's part of `/v1/openapi.json`. */
export function whoamiOpenApi(b: OpenApiBuilder): void {
  b.read('/v1/whoami', {
    operationId: 'whoami',
    summary: 'Whom the bearer token belongs to: the operator, or a tenant (with its client ID)',
    tag: sharedTags.tenant,
    parameters: [],
    response: ['Whoami', whoamiSchema, 'The token\'s owner'],
  });
}
