import Router from '@koa/router';
import type { Kysely } from 'kysely';
import { notFound } from '../../../core/errors.js';
import { guardPathParameters } from '../../platform/http/storable-params.js';
import { authenticate } from '../route-kit/auth.js';
import { clientIdParam, type OpenApiBuilder } from '../route-kit/openapi/builder.js';
import { errorResponses, ok, operation, pathParam } from '../route-kit/openapi/operations.js';
import { tenantInScope } from '../route-kit/tenant-scope.js';
import type { Database } from '../../platform/store/schema.js';
import { loadMessageStatus, messageStatusSchema } from '../../features/campaigns/message-status.js';

/**
 * `GET /v1/tenants/{clientId}/campaigns/{campaignId}/messages/{messageId}`: what happened to a
 * SendMessage and its callbacks (message-status.ts). Beside the management API under `/v1`, with
 * its bearer tokens, tenant scoping and errors; a tenant's `campaign` token (the one SendMessage
 * takes) may read it too, so the client holding a message_id can ask with the token it has.
 */
export interface MessageStatusRouteDeps {
  readonly db: Kysely<Database>;
  readonly operatorToken: string;
}

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const messageStatusPath = '/v1/tenants/{clientId}/campaigns/{campaignId}/messages/{messageId}';

export function messageStatusRouter(deps: MessageStatusRouteDeps): Router {
  const router = new Router({ prefix: '/v1' });
  router.get('/tenants/:clientId/campaigns/:campaignId/messages/:messageId', async (ctx) => {
    const principal = await authenticate(ctx, deps.db, deps.operatorToken, ['management', 'campaign']);
    const params = ctx.params as { clientId: string; campaignId: string; messageId: string };
    const tenant = await tenantInScope(deps.db, principal, params.clientId);
    // Ids that cannot exist are missing, not malformed, as on the other item routes.
    const found = uuid.test(params.campaignId) && uuid.test(params.messageId)
      ? await loadMessageStatus(deps.db, tenant, params.campaignId.toLowerCase(), params.messageId.toLowerCase())
      : undefined;
    if (!found) throw notFound(`message "${params.messageId}" of campaign "${params.campaignId}"`);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = found;
  });
  return guardPathParameters(router);
}

/** The route's part of `/v1/openapi.json`. */
export function messageStatusOpenApi(b: OpenApiBuilder): void {
  const status = b.addZod('MessageStatus', messageStatusSchema, 'output');
  b.tag('CampaignMessage', 'Messages accepted by the Campaign SendMessage Twirp method (`POST {base_url}/api/v1/Campaign/SendMessage`, described by proto/campaign.proto, not here): what happened to each.');
  b.path(messageStatusPath, 'get', operation({
    operationId: 'getMessageStatus',
    summary: 'What happened to a SendMessage: its state, call attempts and callback deliveries',
    description:
      'Reads the message that `Campaign/SendMessage` answered with `message_id`: its state, every call attempt (outcome, SIP status, ' +
      'call record) and every status callback with its delivery state. Takes the operator token, a `management` token or the ' +
      "tenant's `campaign` token. Another tenant's or campaign's message answers 404 like a missing one.",
    tag: 'CampaignMessage',
    parameters: [clientIdParam, pathParam('campaignId', 'CampaignID of the SendMessage'), pathParam('messageId', 'message_id SendMessage returned')],
    responses: { '200': ok('The message', status), ...errorResponses(401, 404) },
  }));
}
