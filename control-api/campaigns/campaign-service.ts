import { createHash, timingSafeEqual } from 'node:crypto';
import type Koa from 'koa';
import type { Kysely } from 'kysely';
import getRawBody from 'raw-body';
import { systemClock, type Clock } from '../../core/clock.js';
import { AppError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { counter } from '../../core/metrics.js';
import { clientIdPattern } from '../domain/tenant.js';
import type { Database } from '../store/schema.js';
import { hashToken } from '../tenants/api-tokens.js';
import { acceptMessage } from './accept-message.js';
import { parseSendMessage } from './send-message-request.js';
import { badRoute, isJsonContentType, writeTwirpError } from './twirp.js';

/**
 * `POST {base_url}/api/v1/Campaign/SendMessage` (spec: Campaign SendMessage). The tenant is the
 * first label of the Host (`<client_id>.<baseDomain>`); everything under `/api/` is answered
 * here with Twirp errors, never by the management API's error format.
 */
export interface CampaignServiceDeps {
  readonly db: Kysely<Database>;
  readonly logger: Logger;
  readonly baseDomain: string;
  readonly bodyLimitBytes: number;
  readonly clock?: Clock;
  /** Makes the scheduler's job fire at the due time (Agenda); absent: the store poller finds it. */
  readonly enqueue?: (messageId: string, dueAt: number) => Promise<void>;
}

export const sendMessagePath = '/api/v1/Campaign/SendMessage';
const idempotencyKeyPattern = /^[\x21-\x7e]{1,255}$/;
const unauthenticated = (): AppError => new AppError('unauthenticated', 'Authentication required');
const requests = counter('campaign_send_message_total', 'Campaign SendMessage requests by Twirp code', ['code']);

/** `acme.example.com` with base domain `example.com` -> `acme`; undefined for anything else. */
export function clientIdFromHost(host: string, baseDomain: string): string | undefined {
  const name = host.toLowerCase().replace(/:\d+$/, '').replace(/\.$/, '');
  const suffix = `.${baseDomain.toLowerCase().replace(/^\./, '')}`;
  if (!name.endsWith(suffix)) return undefined;
  const label = name.slice(0, -suffix.length);
  return clientIdPattern.test(label) ? label : undefined;
}

/** The token as sent: bare (the spec's sample) or with a `Bearer` scheme. */
function presentedToken(header: string | undefined): string | undefined {
  const value = (header ?? '').trim();
  if (!value) return undefined;
  const bearer = /^Bearer\s+(.+)$/i.exec(value);
  return (bearer ? bearer[1]! : value).trim() || undefined;
}

interface Caller {
  readonly tenantId: string;
  readonly timezone: string;
}

/** One round trip: the tenant by client ID and, if it exists, its token with that digest. */
async function resolveCaller(db: Kysely<Database>, clientId: string, token: string | undefined, now: number): Promise<Caller> {
  const digest = hashToken(token ?? '');
  const row = await db
    .selectFrom('tenants')
    .leftJoin('api_tokens', (join) => join.onRef('api_tokens.tenant_id', '=', 'tenants.id').on('api_tokens.token_hash', '=', digest))
    .select(['tenants.id', 'tenants.timezone', 'api_tokens.token_hash', 'api_tokens.scopes', 'api_tokens.expires_at', 'api_tokens.revoked_at'])
    .where('tenants.client_id', '=', clientId)
    .executeTakeFirst();
  if (!row) throw new AppError('not_found', `no tenant '${clientId}': check the client ID in the address`);
  if (!token || token.length > 512 || !row.token_hash) throw unauthenticated();
  // The lookup was by digest; compare the digests again in constant time before trusting the match.
  if (!timingSafeEqual(Buffer.from(row.token_hash, 'hex'), createHash('sha256').update(token, 'utf8').digest())) throw unauthenticated();
  if (row.revoked_at || (row.expires_at && row.expires_at.getTime() <= now) || !(row.scopes ?? []).includes('campaign')) throw unauthenticated();
  return { tenantId: row.id, timezone: row.timezone };
}

async function readBody(ctx: Koa.Context, limit: number): Promise<unknown> {
  let text: string;
  try {
    text = await getRawBody(ctx.req, { limit, encoding: 'utf8' });
  } catch (error) {
    const type = (error as { type?: string }).type;
    if (type === 'entity.too.large') throw new AppError('malformed', `request body exceeds ${limit} bytes`);
    if (type === 'request.aborted') throw new AppError('canceled', 'client aborted the request');
    throw new AppError('malformed', 'could not read the request body');
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new AppError('malformed', `the json request could not be decoded: ${(error as Error).message}`);
  }
}

export function campaignService(deps: CampaignServiceDeps): Koa.Middleware {
  const clock = deps.clock ?? systemClock;
  return async (ctx, next) => {
    if (ctx.path !== '/api' && !ctx.path.startsWith('/api/')) return next();
    try {
      const clientId = clientIdFromHost(ctx.get('Host'), deps.baseDomain);
      if (!clientId) throw new AppError('not_found', `request URL incorrect: address the API as <client_id>.${deps.baseDomain}`);
      if (ctx.path !== sendMessagePath) throw new AppError('not_found', `request URL incorrect: no method at ${ctx.path} (check the path and client ID)`);
      if (ctx.method !== 'POST') throw badRoute(ctx, `unsupported method "${ctx.method}" (only POST is allowed)`);
      if (!isJsonContentType(ctx.get('Content-Type'))) throw badRoute(ctx, `unexpected Content-Type: "${ctx.get('Content-Type')}" (send application/json)`);
      const idempotencyKey = ctx.get('Idempotency-Key') || undefined;
      if (idempotencyKey !== undefined && !idempotencyKeyPattern.test(idempotencyKey)) {
        throw new AppError('invalid_argument', 'Idempotency-Key must be 1 to 255 visible ASCII characters', { meta: { argument: 'Idempotency-Key' } });
      }
      const now = clock.now();
      const caller = await resolveCaller(deps.db, clientId, presentedToken(ctx.get('Authorization')), now);
      const body = await readBody(ctx, deps.bodyLimitBytes);
      const request = parseSendMessage(body, { timezone: caller.timezone, now });
      const accepted = await acceptMessage(deps.db, caller.tenantId, request, { ...(idempotencyKey ? { idempotencyKey } : {}), now });
      if (accepted.created && deps.enqueue) {
        // Stored already; a lost job is found by the store poller's reconciliation pass.
        await deps.enqueue(accepted.messageId, accepted.dueAt).catch((error: unknown) => deps.logger.warn({ err: error, messageId: accepted.messageId }, 'could not enqueue campaign job'));
      }
      ctx.status = 200;
      ctx.type = 'application/json';
      ctx.body = { message_id: accepted.messageId };
      requests.inc({ code: 'ok' });
    } catch (thrown) {
      const error = thrown instanceof AppError ? thrown : new AppError('internal', 'internal server error: retry after a short delay', { cause: thrown });
      if (!(thrown instanceof AppError)) deps.logger.error({ err: thrown, path: ctx.path }, 'SendMessage failed');
      requests.inc({ code: error.code });
      writeTwirpError(ctx, error);
    }
  };
}
