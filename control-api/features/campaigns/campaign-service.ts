import { createHash, timingSafeEqual } from 'node:crypto';
import type Koa from 'koa';
import type { Kysely } from 'kysely';
import getRawBody from 'raw-body';
import { systemClock, type Clock } from '../../../core/clock.js';
import { AppError } from '../../../core/errors.js';
import type { Logger } from '../../../core/logger.js';
import { counter } from '../../../core/metrics.js';
import { clientIdPattern } from '../../model/domain/tenant.js';
import type { Database } from '../../platform/store/schema.js';
import { assertAcceptableJson } from '../../platform/http/acceptable-json.js';
import { noteRoute, noteTenant } from '../../platform/http/request-log.js';
import { hashToken } from '../../model/tenants/api-tokens.js';
import { acceptMessage } from './accept-message.js';
import { CallerCache, type CachedCaller } from './caller-cache.js';
import { MessageIntake } from './message-intake.js';
import { checkCallbackTarget, parseSendMessage, type SendMessageRequest } from './send-message-request.js';
import { badRoute, writeTwirpError } from './twirp.js';
import { decodeProtobufRequest, encodeResponse, twirpEncoding, twirpRoutes, withSpecNames, type TwirpEncoding } from './twirp-codec.js';

/**
 * `POST {base_url}/api/v1/Campaign/SendMessage` (spec: Campaign SendMessage; proto/campaign.proto),
 * JSON or protobuf (twirp-codec.ts). The tenant is the first label of the Host
 * (`<client_id>.<baseDomain>`); everything under `/api/` is answered here with Twirp errors,
 * never by the management API's error format.
 */
export interface CampaignServiceDeps {
  readonly db: Kysely<Database>;
  readonly logger: Logger;
  readonly baseDomain: string;
  readonly bodyLimitBytes: number;
  readonly clock?: Clock;
  /**
   * Makes a scheduler job fire at a due time (Agenda); absent: the store poller finds the message.
   * Called once per due moment of a group of stored messages, with one of them: the job sweeps
   * every message due by then (campaign-worker.ts), so a job per message is not needed.
   */
  readonly enqueue?: (messageId: string, dueAt: number) => Promise<void>;
  /** How long a resolved caller is reused; default 5 s (0 disables the cache). */
  readonly callerCacheMs?: number;
}

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

/** One round trip: the tenant by client ID and, if it exists, its token with that digest. */
async function resolveCaller(db: Kysely<Database>, clientId: string, token: string | undefined, digest: string, now: number): Promise<CachedCaller> {
  const row = await db
    .selectFrom('tenants')
    .leftJoin('api_tokens', (join) => join.onRef('api_tokens.tenant_id', '=', 'tenants.id').on('api_tokens.token_hash', '=', digest))
    .select(['tenants.id', 'tenants.timezone', 'tenants.settings', 'api_tokens.token_hash', 'api_tokens.scopes', 'api_tokens.expires_at', 'api_tokens.revoked_at'])
    .where('tenants.client_id', '=', clientId)
    .executeTakeFirst();
  if (!row) throw new AppError('not_found', `no tenant '${clientId}': check the client ID in the address`);
  if (!token || token.length > 512 || !row.token_hash) throw unauthenticated();
  // The lookup was by digest; compare the digests again in constant time before trusting the match.
  if (!timingSafeEqual(Buffer.from(row.token_hash, 'hex'), createHash('sha256').update(token, 'utf8').digest())) throw unauthenticated();
  if (row.revoked_at || (row.expires_at && row.expires_at.getTime() <= now) || !(row.scopes ?? []).includes('campaign')) throw unauthenticated();
  const allowlist = (row.settings as { ssrfAllowlist?: unknown } | null)?.ssrfAllowlist;
  return { tenantId: row.id, timezone: row.timezone, ssrfAllowlist: Array.isArray(allowlist) ? allowlist.filter((e): e is string => typeof e === 'string') : [] };
}

/** The body as a request of this caller: fields (parseSendMessage), then the Callback.URL's target. */
function validRequest(body: unknown, caller: CachedCaller, now: number): SendMessageRequest {
  const request = parseSendMessage(body, { timezone: caller.timezone, now });
  checkCallbackTarget(request, caller.ssrfAllowlist);
  return request;
}

/** The request as a JSON object under the spec's field names, whichever encoding it came in. */
async function readBody(ctx: Koa.Context, limit: number, encoding: TwirpEncoding): Promise<unknown> {
  let raw: Buffer;
  try {
    raw = await getRawBody(ctx.req, { limit });
  } catch (error) {
    const type = (error as { type?: string }).type;
    if (type === 'entity.too.large') throw new AppError('malformed', `request body exceeds ${limit} bytes`);
    if (type === 'request.aborted') throw new AppError('canceled', 'client aborted the request');
    throw new AppError('malformed', 'could not read the request body');
  }
  let body: unknown;
  if (encoding === 'protobuf') {
    body = decodeProtobufRequest(raw);
  } else {
    try {
      body = JSON.parse(raw.toString('utf8')) as unknown;
    } catch (error) {
      throw new AppError('malformed', `the json request could not be decoded: ${(error as Error).message}`);
    }
  }
  // Variables and Callback.State are stored as jsonb: U+0000 or a lone surrogate anywhere is an
  // invalid_argument naming the field (meta.argument), as the management API answers.
  assertAcceptableJson(body);
  return encoding === 'json' ? withSpecNames(body) : body;
}

/**
 * One job per due moment of a group rather than per message: due times are grouped on a 250 ms
 * grid and each group's job is set for its latest message, so no message waits for a later job;
 * a grid cell this process already has a job for (at or after the new times, and more than a
 * second ahead, so it cannot have swept before these rows committed) gets no second one. `now` is
 * the time of the commit.
 */
function dueJobs(deps: CampaignServiceDeps): ((created: ReadonlyArray<{ messageId: string; dueAt: number }>, now: number) => Promise<void>) | undefined {
  const enqueue = deps.enqueue;
  if (!enqueue) return undefined;
  const scheduled = new Map<number, number>();
  return async (created, now) => {
    const cells = new Map<number, { messageId: string; dueAt: number }>();
    for (const m of created) {
      const cell = Math.floor(m.dueAt / 250);
      const prev = cells.get(cell);
      if (!prev || m.dueAt > prev.dueAt) cells.set(cell, m);
    }
    if (scheduled.size > 10_000) for (const [cell, at] of scheduled) if (at < now - 60_000) scheduled.delete(cell);
    const pending: Array<Promise<void>> = [];
    for (const [cell, m] of cells) {
      // Reuse only a job still well in the future: one about to fire may sweep before these rows were visible.
      const at = scheduled.get(cell);
      if (at !== undefined && at >= m.dueAt && at > now + 1_000) continue;
      scheduled.set(cell, m.dueAt);
      pending.push(
        // Stored already; a lost job is found by the store poller's reconciliation pass.
        enqueue(m.messageId, m.dueAt).catch((error: unknown) => {
          if (scheduled.get(cell) === m.dueAt) scheduled.delete(cell);
          deps.logger.warn({ err: error, messageId: m.messageId }, 'could not enqueue campaign job');
        }),
      );
    }
    await Promise.all(pending);
  };
}

export function campaignService(deps: CampaignServiceDeps): Koa.Middleware {
  const clock = deps.clock ?? systemClock;
  const callers = new CallerCache({ ttlMs: deps.callerCacheMs ?? 5_000, maxEntries: 10_000 });
  const jobs = dueJobs(deps);
  const intake = new MessageIntake({ db: deps.db, ...(jobs ? { onStored: (created) => jobs(created, clock.now()) } : {}) });
  return async (ctx, next) => {
    if (ctx.path !== '/api' && !ctx.path.startsWith('/api/')) return next();
    try {
      const clientId = clientIdFromHost(ctx.get('Host'), deps.baseDomain);
      if (!clientId) throw new AppError('not_found', `request URL incorrect: address the API as <client_id>.${deps.baseDomain}`);
      if (!twirpRoutes.has(ctx.path)) throw badRoute(ctx, `no handler for path "${ctx.path}": the service's methods are ${[...twirpRoutes.keys()].join(', ')}`);
      noteRoute(ctx, ctx.path);
      if (ctx.method !== 'POST') throw badRoute(ctx, `unsupported method "${ctx.method}" (only POST is allowed)`);
      const encoding = twirpEncoding(ctx.get('Content-Type'));
      if (!encoding) throw badRoute(ctx, `unexpected Content-Type: "${ctx.get('Content-Type')}" (send application/json or application/protobuf)`);
      const idempotencyKey = ctx.get('Idempotency-Key') || undefined;
      if (idempotencyKey !== undefined && !idempotencyKeyPattern.test(idempotencyKey)) {
        throw new AppError('invalid_argument', 'Idempotency-Key must be 1 to 255 visible ASCII characters', { meta: { argument: 'Idempotency-Key' } });
      }
      const now = clock.now();
      const token = presentedToken(ctx.get('Authorization'));
      const digest = hashToken(token ?? '');
      const cached = token && deps.callerCacheMs !== 0 ? callers.get(clientId, digest, now) : undefined;
      const caller = cached ?? (await resolveCaller(deps.db, clientId, token, digest, now));
      if (!cached && token) callers.set(clientId, digest, caller, now);
      noteTenant(ctx, caller.tenantId);
      const recheckCaller = (): Promise<CachedCaller> => {
        callers.forget(clientId, digest);
        return resolveCaller(deps.db, clientId, token, digest, now);
      };
      const body = await readBody(ctx, deps.bodyLimitBytes, encoding).catch(async (error: unknown) => {
        if (cached) await recheckCaller();
        throw error;
      });
      let request: SendMessageRequest;
      try {
        request = validRequest(body, caller, now);
      } catch (error) {
        // A refusal is answered as the uncached path would: a token revoked since it was cached
        // gets `unauthenticated`, not a validation message, and the timezone and allowlist are current.
        if (!cached) throw error;
        request = validRequest(body, await recheckCaller(), now);
      }
      const key = idempotencyKey ? { idempotencyKey } : {};
      // Fast path: stored with the concurrent requests in one statement that re-checks the caller.
      let accepted = await intake.submit({ tenantId: caller.tenantId, tokenHash: digest, timezone: caller.timezone, request, ...key, now });
      if (!accepted) {
        // Not stored there: an Idempotency-Key replay, a campaign that is unknown or unpublished, or
        // a caller that changed since it was cached. The per-request path answers each exactly.
        const fresh = await recheckCaller();
        accepted = await acceptMessage(deps.db, fresh.tenantId, validRequest(body, fresh, now), { ...key, now });
        if (accepted.created) await jobs?.([accepted], clock.now());
      }
      const answer = encodeResponse(accepted.messageId, encoding);
      ctx.status = 200;
      ctx.type = answer.type;
      ctx.body = answer.body;
      requests.inc({ code: 'ok' });
    } catch (thrown) {
      const error = thrown instanceof AppError ? thrown : new AppError('internal', 'internal server error: retry after a short delay', { cause: thrown });
      if (!(thrown instanceof AppError)) deps.logger.error({ err: thrown, path: ctx.path }, 'SendMessage failed');
      requests.inc({ code: error.code });
      writeTwirpError(ctx, error);
    }
  };
}
