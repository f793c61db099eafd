import type Router from '@koa/router';
import { z } from 'zod';
import { authenticate } from './auth.js';
import type { ManagementDeps } from './management-deps.js';
import { clientIdParam, type OpenApiBuilder } from './openapi/builder.js';
import { sharedTags } from './openapi/operations.js';
import { tenantInScope } from './tenant-scope.js';

/**
 * The tenant's own addresses, for snippets a person copies from the dashboard: SendMessage is
 * addressed by Host (`<clientId>.<baseDomain>`, docs/api.md), with the scheme and port this request
 * reached the control API on.
 */
export const tenantEndpointsSchema = z.object({
  sendMessageUrl: z.string().describe('POST URL of the campaign SendMessage method for this tenant ({base_url}/api/v1/Campaign/SendMessage)'),
  baseUrl: z.string().describe('The tenant address of the platform ({base_url})'),
});

/** `GET /v1/tenants/{clientId}/endpoints`. */
export function mountEndpointsRoute(router: Router, deps: ManagementDeps, baseDomain: string): void {
  router.get('/tenants/:clientId/endpoints', async (ctx) => {
    const principal = await authenticate(ctx, deps.db, deps.operatorToken);
    const tenant = await tenantInScope(deps.db, principal, (ctx.params as { clientId: string }).clientId, ctx);
    // The port the caller used (Host header), so the snippet works from where the dashboard runs.
    const port = /:(\d{1,5})$/.exec(ctx.host)?.[1];
    const baseUrl = `${ctx.protocol}://${tenant.clientId}.${baseDomain.replace(/^\./, '')}${port ? `:${port}` : ''}`;
    ctx.body = { baseUrl, sendMessageUrl: `${baseUrl}/api/v1/Campaign/SendMessage` } satisfies z.infer<typeof tenantEndpointsSchema>;
  });
}

/** The route's part of `/v1/openapi.json`. */
export function endpointsOpenApi(b: OpenApiBuilder): void {
  b.read('/v1/tenants/{clientId}/endpoints', {
    operationId: 'getTenantEndpoints',
    summary: 'The tenant\'s own addresses: its base URL and the SendMessage URL',
    tag: sharedTags.tenant,
    parameters: [clientIdParam],
    response: ['TenantEndpoints', tenantEndpointsSchema, 'The tenant\'s addresses'],
  });
}
