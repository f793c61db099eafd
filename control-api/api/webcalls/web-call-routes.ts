import { isIP } from 'node:net';
import type Router from '@koa/router';
import { z } from 'zod';
import { notFound } from '../../../core/errors.js';
import type { Clock } from '../../../core/clock.js';
import { advertisedSipAddress } from '../../../core/config/advertised-address.js';
import type { PlatformConfig } from '../../../core/config/schema.js';
import { languageTag, normaliseE164 } from '../../model/domain/common.js';
import { safeParseReporting } from '../../platform/validation.js';
import { fromZodError } from '../../platform/http/error-response.js';
import { readJsonBody } from '../../platform/http/read-body.js';
import { authenticate } from '../route-kit/auth.js';
import type { ManagementDeps } from '../route-kit/management-deps.js';
import { clientIdParam, type OpenApiBuilder } from '../route-kit/openapi/builder.js';
import { errorResponses, jsonBody, operation } from '../route-kit/openapi/operations.js';
import { tenantInScope } from '../route-kit/tenant-scope.js';
import { issueCallToken } from '../../platform/crypto/call-token.js';

/** What the dashboard asks for: a call to one of the tenant's numbers, or to a recipe directly. */
export const webCallRequestSchema = z
  .strictObject({
    phoneNumber: z.string().describe('A number of the tenant (E.164): the call runs its recipe with its settings').optional(),
    recipe: z.string().describe('A recipe of the tenant, by name: the call runs it without a number').optional(),
    language: languageTag('language').describe('Speech language of a recipe call (default en-US); a number uses its own').optional(),
  })
  .refine((r) => (r.phoneNumber === undefined) !== (r.recipe === undefined), { message: 'give exactly one of phoneNumber and recipe', path: ['recipe'] });

export const webCallSchema = z.object({
  token: z.string().describe('The call token: send it as the X-Call-Token header of the INVITE; valid for one call until expiresAt'),
  expiresAt: z.string().describe('Until when the token can start a call (ISO 8601)'),
  sipUri: z.string().describe('The Request-URI to call: sip:<E.164>@... or sip:recipe-<id>@...'),
  websocketUrl: z.string().describe('SIP over WebSocket (RFC 7118) URL of the gateway: wss:// with the gateway\'s TLS certificate'),
});

export interface WebCallRouteDeps extends ManagementDeps {
  readonly config: Pick<PlatformConfig, 'sip' | 'webCalls'>;
  readonly tokenKey: Buffer;
  readonly clock: Clock;
}

const uriHost = (address: string): string => (isIP(address) === 6 ? `[${address}]` : address);

/** Where browsers connect: the configured URL, else the gateway's WSS port (WS when WSS is off) on its public address. */
export function webCallWebsocketUrl(config: Pick<PlatformConfig, 'sip' | 'webCalls'>): string {
  if (config.webCalls.websocketUrl) return config.webCalls.websocketUrl;
  const host = uriHost(advertisedSipAddress(config.sip));
  return config.sip.wssPort > 0 ? `wss://${host}:${config.sip.wssPort}` : `ws://${host}:${config.sip.wsPort}`;
}

/** `POST /v1/tenants/{clientId}/web-calls`: a call token for one call from a browser. */
export function mountWebCallRoutes(router: Router, deps: WebCallRouteDeps): void {
  router.post('/tenants/:clientId/web-calls', async (ctx) => {
    const principal = await authenticate(ctx, deps.db, deps.operatorToken);
    const tenant = await tenantInScope(deps.db, principal, (ctx.params as { clientId: string }).clientId, ctx);
    const parsed = safeParseReporting(webCallRequestSchema, await readJsonBody(ctx, deps.bodyLimitBytes));
    if (!parsed.success) throw fromZodError(parsed.error, 'web call request');
    const request = parsed.data;
    const host = uriHost(advertisedSipAddress(deps.config.sip));
    let target: Parameters<typeof issueCallToken>[1]['target'];
    let user: string;
    if (request.recipe !== undefined) {
      const recipe = await deps.db.selectFrom('recipes').select('id').where('tenant_id', '=', tenant.id).where('name', '=', request.recipe).executeTakeFirst();
      if (!recipe) throw notFound(`recipe "${request.recipe}"`);
      target = { kind: 'recipe', recipeId: recipe.id };
      user = `recipe-${recipe.id}`;
    } else {
      const e164 = normaliseE164(request.phoneNumber ?? '');
      const number = e164 ? await deps.db.selectFrom('phone_numbers').select(['id', 'e164']).where('tenant_id', '=', tenant.id).where('e164', '=', e164).executeTakeFirst() : undefined;
      if (!number) throw notFound(`phone number "${request.phoneNumber ?? ''}"`);
      target = { kind: 'number', numberId: number.id };
      user = number.e164;
    }
    const expiresAt = deps.clock.now() + deps.config.webCalls.tokenTtlSeconds * 1000;
    const { token } = issueCallToken(deps.tokenKey, { tenantId: tenant.id, target, expiresAt, ...(request.language ? { language: request.language } : {}) });
    ctx.status = 201;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { token, expiresAt: new Date(expiresAt).toISOString(), sipUri: `sip:${user}@${host}`, websocketUrl: webCallWebsocketUrl(deps.config) } satisfies z.infer<typeof webCallSchema>;
  });
}

/** The route's part of `/v1/openapi.json`. */
export function webCallOpenApi(b: OpenApiBuilder): void {
  const request = b.addZod('WebCallRequest', webCallRequestSchema, 'input');
  const response = b.addZod('WebCall', webCallSchema, 'output');
  b.tag('WebCall', 'Calls from a browser (sip.js over SIP/WebSocket, WebRTC media): a short-lived token per call.');
  b.path('/v1/tenants/{clientId}/web-calls', 'post', operation({
    operationId: 'createWebCall',
    summary: 'Issue a call token for one web call to a number or a recipe of the tenant',
    description: 'The browser connects to `websocketUrl` (RFC 7118, subprotocol `sip`) and sends an INVITE to `sipUri` with the header `X-Call-Token: <token>` and a WebRTC SDP offer. The token is valid for one call until `expiresAt`; the call is recorded with direction `web`.',
    tag: 'WebCall',
    parameters: [clientIdParam],
    requestBody: jsonBody(request),
    responses: { '201': { description: 'The call token and where to call', content: { 'application/json': { schema: response } } }, ...errorResponses(400, 401, 404, 413, 415) },
  }));
}
