import { sql, type Kysely, type Transaction } from 'kysely';
import type { Clock } from '../../../core/clock.js';
import { AppError } from '../../../core/errors.js';
import type { Logger } from '../../../core/logger.js';
import { PollingLoop } from '../../../core/polling-loop.js';
import { counter } from '../../../core/metrics.js';
import type { OutboundHttp } from '../../platform/net/outbound-http.js';
import type { Database } from '../../platform/store/schema.js';
import { signatureHeader, signatureHeaderValue } from '../../platform/webhooks/signing.js';

/**
 * Call status callbacks (spec: Events 2). Every state change of a message is written to an outbox
 * row in the same transaction as the change itself, so a callback is never lost nor invented; a
 * separate delivery loop POSTs them, signed, with backoff, and never holds up a call.
 */
export const callbackStatuses = [
  'scheduled',
  'rescheduled',
  'discarded',
  'ringing',
  'answered',
  'busy',
  'no-answer',
  'failed',
  'completed',
] as const;
export type CallbackStatus = (typeof callbackStatuses)[number];

export interface CallbackEvent {
  readonly status: CallbackStatus;
  /** Attempt number the event is about (0 before the first attempt). */
  readonly attempt: number;
  /** True when the message will not change any more. */
  readonly final: boolean;
  readonly sipStatus?: number;
  readonly reason?: string;
  /** For scheduled / rescheduled: when the next attempt is due. */
  readonly nextAttemptAt?: number;
  readonly durationMs?: number;
}

export interface MessageForCallback {
  readonly id: string;
  readonly tenant_id: string;
  readonly campaign_id: string;
  readonly to_e164: string;
  readonly callback_url: string | null;
  readonly callback_state: unknown;
}

/** The JSON body receivers get; documented in docs/api.md. */
export function callbackBody(message: MessageForCallback, event: CallbackEvent, sequence: number, at: number): Record<string, unknown> {
  return {
    message_id: message.id,
    campaign_id: message.campaign_id,
    to: message.to_e164.replace(/^\+/, ''),
    status: event.status,
    attempt: event.attempt,
    final: event.final,
    sequence,
    timestamp: new Date(at).toISOString(),
    ...(event.sipStatus !== undefined ? { sip_status: event.sipStatus } : {}),
    ...(event.reason !== undefined ? { reason: event.reason } : {}),
    ...(event.nextAttemptAt !== undefined ? { next_attempt_at: new Date(event.nextAttemptAt).toISOString() } : {}),
    ...(event.durationMs !== undefined ? { duration_ms: event.durationMs } : {}),
    // Echoed exactly as received (spec: Callback.State is returned for correlation).
    state: message.callback_state ?? {},
  };
}

/** Adds the event to the outbox inside the caller's transaction; no-op without a Callback.URL. */
export async function enqueueCallback(trx: Transaction<Database> | Kysely<Database>, message: MessageForCallback, event: CallbackEvent, at: number): Promise<void> {
  if (!message.callback_url) return;
  const { callback_seq: sequence } = await trx
    .updateTable('campaign_messages')
    .set({ callback_seq: sql<number>`callback_seq + 1` })
    .where('id', '=', message.id)
    .returning('callback_seq')
    .executeTakeFirstOrThrow();
  await trx
    .insertInto('campaign_callbacks')
    .values({
      message_id: message.id,
      tenant_id: message.tenant_id,
      url: message.callback_url,
      body: JSON.stringify(callbackBody(message, event, sequence, at)),
      next_try_at: new Date(at),
    })
    .execute();
}

export interface CallbackDeliveryOptions {
  readonly db: Kysely<Database>;
  readonly http: OutboundHttp;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The tenant's signing secret; undefined sends the callback unsigned (documented). */
  readonly secretFor: (tenantId: string) => Promise<string | undefined>;
  readonly pollMs?: number;
  readonly batchSize?: number;
  readonly timeoutMs?: number;
  /** Tries before giving up; default 8 (about 2 hours of backoff). */
  readonly maxTries?: number;
  /** Backoff before try n+1 (n >= 1); default 2^n * 15 s with jitter, capped at 1 hour. */
  readonly backoffMs?: (tries: number) => number;
}

interface CallbackRow {
  readonly id: bigint | number;
  readonly message_id: string;
  readonly tenant_id: string;
  readonly url: string;
  readonly body: string;
  readonly tries: number;
}

const delivered = counter('campaign_callbacks_total', 'Campaign status callback delivery results', ['result']);

const defaultBackoff = (tries: number): number => Math.min(3_600_000, 15_000 * 2 ** (tries - 1)) * (0.8 + Math.random() * 0.4);

/**
 * Sends due outbox rows. Rows are claimed with FOR UPDATE SKIP LOCKED plus a short claim lease,
 * so two workers never send the same try concurrently; a crash mid-send leaves the claim to
 * expire and the row is tried again (receivers dedupe on message_id + sequence).
 */
export class CallbackDelivery {
  private readonly loop: PollingLoop;
  private abort = new AbortController();

  constructor(private readonly options: CallbackDeliveryOptions) {
    this.loop = new PollingLoop({
      name: 'callback delivery',
      clock: options.clock,
      logger: options.logger,
      intervalMs: options.pollMs ?? 1_000,
      round: async () => void (await this.deliverDue()),
    });
  }

  start(): void {
    if (this.abort.signal.aborted) this.abort = new AbortController();
    this.loop.start();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop.stop();
  }

  /** Nudges the loop (after a state change) instead of waiting for the next poll. */
  wake(): void {
    this.loop.wake();
  }

  /** One round: sends every due row (in batches); returns how many were attempted. */
  async deliverDue(): Promise<number> {
    let total = 0;
    for (;;) {
      const rows = await this.claim();
      if (rows.length === 0) return total;
      total += rows.length;
      await Promise.all(rows.map((row) => this.send(row)));
      if (this.abort.signal.aborted) return total;
    }
  }

  private async claim(): Promise<CallbackRow[]> {
    const now = new Date(this.options.clock.now());
    const claimFor = new Date(this.options.clock.now() + (this.options.timeoutMs ?? 10_000) * 2);
    return this.options.db.transaction().execute(async (trx) => {
      const rows = await trx
        .selectFrom('campaign_callbacks')
        .select(['id', 'message_id', 'tenant_id', 'url', 'body', 'tries'])
        .where('delivered_at', 'is', null)
        .where('given_up_at', 'is', null)
        .where('next_try_at', '<=', now)
        .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', now)]))
        .orderBy('id')
        .limit(this.options.batchSize ?? 50)
        .forUpdate()
        .skipLocked()
        .execute();
      if (rows.length > 0) {
        await trx
          .updateTable('campaign_callbacks')
          .set({ claimed_until: claimFor })
          .where('id', 'in', rows.map((r) => r.id as bigint))
          .execute();
      }
      return rows;
    });
  }

  private async send(row: CallbackRow): Promise<void> {
    const { clock, db } = this.options;
    let status: number | undefined;
    let error: string | undefined;
    // The target itself is refused (SSRF policy: a private, loopback, link-local or reserved
    // address, also one a host name resolves to, or not an http(s) URL): no retry can succeed.
    let refused = false;
    try {
      const secret = await this.options.secretFor(row.tenant_id);
      const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'voice-agent-platform-callbacks' };
      if (secret) headers[signatureHeader.toLowerCase()] = signatureHeaderValue(secret, row.body, clock.now());
      const response = await this.options.http.request(row.tenant_id, {
        method: 'POST',
        url: row.url,
        headers,
        body: row.body,
        timeoutMs: this.options.timeoutMs ?? 10_000,
        signal: this.abort.signal,
      });
      status = response.status;
    } catch (thrown) {
      error = (thrown as Error).message ?? String(thrown);
      refused = thrown instanceof AppError && (thrown.code === 'permission_denied' || thrown.code === 'invalid_argument');
    }
    const tries = row.tries + 1;
    const ok = status !== undefined && status >= 200 && status < 300;
    // 4xx other than 408/429 means the receiver rejects this body: retrying will not help.
    const permanent = refused || (status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429);
    const giveUp = !ok && (permanent || tries >= (this.options.maxTries ?? 8));
    const now = clock.now();
    await db
      .updateTable('campaign_callbacks')
      .set({
        tries,
        last_status: status ?? null,
        last_error: error?.slice(0, 500) ?? null,
        claimed_until: null,
        ...(ok ? { delivered_at: new Date(now) } : {}),
        ...(giveUp ? { given_up_at: new Date(now) } : {}),
        ...(!ok && !giveUp ? { next_try_at: new Date(now + (this.options.backoffMs ?? defaultBackoff)(tries)) } : {}),
      })
      .where('id', '=', row.id as bigint)
      .execute();
    delivered.inc({ result: ok ? 'delivered' : refused ? 'refused' : giveUp ? 'given_up' : 'retry' });
    if (refused) this.options.logger.warn({ callbackId: String(row.id), messageId: row.message_id, reason: error, tries }, 'campaign callback refused by the outbound address policy: given up, not retried');
    else if (!ok) this.options.logger.warn({ callbackId: String(row.id), status, error, tries, giveUp }, 'campaign callback not delivered');
  }
}
