import type Router from '@koa/router';
import { z } from 'zod';
import { authenticate } from '../route-kit/auth.js';
import type { ManagementDeps } from '../route-kit/management-deps.js';
import { clientIdParam, type OpenApiBuilder } from '../route-kit/openapi/builder.js';
import { sharedTags } from '../route-kit/openapi/operations.js';
import { tenantInScope } from '../route-kit/tenant-scope.js';

/**
 * How the tenant's registering trunks stand with their carriers' registrars (RFC 3261 sec. 10.2):
 * one entry per trunk and gateway node, as the node last wrote it (sip_trunk_registrations).
 */
export const trunkRegistrationSchema = z.object({
  trunk: z.string().describe('The SIP trunk\'s name'),
  contact: z.string().describe('The Contact this gateway node registers (one per node)'),
  state: z
    .enum(['unregistered', 'registering', 'registered', 'refreshing', 'backing-off', 'failed', 'unregistering', 'stopped'])
    .describe('registered/refreshing: bound; registering: first REGISTER out; backing-off: a transient failure, retried with a growing wait; failed: the registrar refused (credentials, 403, 404), retried after the longest wait; unregistering/stopped: the node removed its binding (drain, shutdown, trunk changed)'),
  expiresAt: z.string().nullable().describe('When the registrar drops the binding unless refreshed (ISO 8601)'),
  retryAt: z.string().nullable().describe('When the next attempt goes (backing-off, failed)'),
  lastError: z.string().nullable().describe('Why the last attempt failed: the registrar\'s status and reason, or a local cause (DNS)'),
  updatedAt: z.string().describe('When the node last wrote this entry'),
});
export const trunkRegistrationListSchema = z.object({ items: z.array(trunkRegistrationSchema) });
export type TrunkRegistrationView = z.infer<typeof trunkRegistrationSchema>;

const iso = (d: Date | null): string | null => (d ? new Date(d).toISOString() : null);

/** `GET /v1/tenants/{clientId}/sip-trunk-registrations`: read-only, for the tenant's own tokens and the operator. */
export function mountTrunkRegistrationRoute(router: Router, deps: ManagementDeps): void {
  router.get('/tenants/:clientId/sip-trunk-registrations', async (ctx) => {
    const principal = await authenticate(ctx, deps.db, deps.operatorToken);
    const tenant = await tenantInScope(deps.db, principal, (ctx.params as { clientId: string }).clientId, ctx);
    const rows = await deps.db
      .selectFrom('sip_trunk_registrations as r')
      .innerJoin('sip_trunks as t', 't.id', 'r.trunk_id')
      .select(['t.name', 'r.contact', 'r.state', 'r.expires_at', 'r.retry_at', 'r.last_error', 'r.updated_at'])
      .where('r.tenant_id', '=', tenant.id)
      .orderBy('t.name')
      .orderBy('r.contact')
      .execute();
    ctx.set('Cache-Control', 'no-store');
    ctx.body = {
      items: rows.map((r): TrunkRegistrationView => ({
        trunk: r.name,
        contact: r.contact,
        state: r.state as TrunkRegistrationView['state'],
        expiresAt: iso(r.expires_at),
        retryAt: iso(r.retry_at),
        lastError: r.last_error,
        updatedAt: iso(r.updated_at) as string,
      })),
    };
  });
}

/** The route's part of `/v1/openapi.json`. */
export function trunkRegistrationOpenApi(b: OpenApiBuilder): void {
  b.read('/v1/tenants/{clientId}/sip-trunk-registrations', {
    operationId: 'listSipTrunkRegistrations',
    summary: 'How each registering SIP trunk stands with its carrier\'s registrar, per gateway node (state, expiry, last error)',
    tag: sharedTags.sipTrunk,
    parameters: [clientIdParam],
    response: ['SipTrunkRegistrationList', trunkRegistrationListSchema, 'The registrations of the tenant\'s trunks'],
  });
}
