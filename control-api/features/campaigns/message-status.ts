import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { Database } from '../../platform/store/schema.js';
import { callbackStatuses } from './callbacks.js';

/**
 * What happened to one SendMessage (its `message_id`): the message's state, every call attempt
 * and every status callback delivery, read from the scheduler's own tables (campaign_messages,
 * campaign_attempts, campaign_callbacks) and the call records (calls). Only what those store.
 */
export const messageStatuses = ['scheduled', 'calling', 'completed', 'busy', 'no-answer', 'failed', 'discarded'] as const;
const finalStatuses: ReadonlySet<string> = new Set(['completed', 'busy', 'no-answer', 'failed', 'discarded']);
export const attemptStatuses = ['claimed', 'dialing', 'ringing', 'answered', 'completed', 'busy', 'no-answer', 'failed'] as const;
export const waitReasons = ['initial', 'retry', 'window', 'concurrency'] as const;

const instant = z.iso.datetime({ offset: true });

export const attemptViewSchema = z.object({
  attempt: z.number().int().min(1).describe('1 = first call, 2 = first retry, ...'),
  status: z.enum(attemptStatuses).describe('claimed (taken by a worker), dialing, ringing, answered while it runs; then its outcome'),
  callerNumber: z.string().describe('the number the call was placed from, E.164'),
  sipStatus: z.number().int().nullable().describe('final SIP status of the INVITE (200 answered, 486 busy, 487 no answer within the ring duration, ...); null while none'),
  reason: z.string().nullable().describe('why the attempt ended as it did, when recorded'),
  startedAt: instant.describe('when the attempt was claimed'),
  answeredAt: instant.nullable(),
  endedAt: instant.nullable(),
  callId: z.uuid().nullable().describe('its call record (`GET .../calls/{callId}`), once written: at the outcome of a call that never connected, at answer of one that did'),
});

export const callbackDeliverySchema = z.object({
  sequence: z.number().int().min(1).describe('the `sequence` of the callback body; increases per message'),
  event: z.enum(callbackStatuses).describe('the `status` the callback reports'),
  attempt: z.number().int().min(0),
  final: z.boolean(),
  createdAt: instant.describe('when the state change happened (the body\'s `timestamp`)'),
  delivery: z.enum(['pending', 'delivered', 'givenUp']).describe('pending: not delivered yet (retried with backoff); givenUp: tries exhausted, a 4xx answer, or a target the address policy refuses'),
  tries: z.number().int().min(0),
  lastStatus: z.number().int().nullable().describe('HTTP status of the last try; null when it got none (network error) or none was made'),
  lastError: z.string().nullable(),
  nextTryAt: instant.nullable().describe('pending only: when the next try is due'),
  deliveredAt: instant.nullable(),
  givenUpAt: instant.nullable(),
});

export const messageStatusSchema = z.object({
  id: z.uuid().describe('the message_id SendMessage returned'),
  tenant: z.string().describe('client ID of the tenant'),
  campaignId: z.uuid(),
  to: z.string().describe('the number called, E.164'),
  status: z.enum(messageStatuses).describe('scheduled (waiting for its next attempt), calling (an attempt is in progress), or final: completed, busy, no-answer, failed (the last attempt\'s outcome, retries spent), discarded (outside the working window with "Discard the call")'),
  final: z.boolean().describe('true when nothing will change any more'),
  scheduledAt: instant.describe('ScheduledAt.Time as read (timezone applied)'),
  bypassCallingWindow: z.boolean(),
  nextAttemptAt: instant.nullable().describe('scheduled only: when the next attempt is due'),
  waitReason: z.enum(waitReasons).nullable().describe('scheduled only: initial (the requested time), retry, window (the working window opens), concurrency (campaign or number at its limit)'),
  attemptsMade: z.number().int().min(0),
  idempotencyKey: z.string().nullable(),
  variables: z.record(z.string(), z.unknown()),
  createdAt: instant,
  updatedAt: instant,
  attempts: z.array(attemptViewSchema).describe('oldest first'),
  callback: z
    .object({
      url: z.string(),
      state: z.record(z.string(), z.unknown()).nullable().describe('Callback.State as sent'),
      deliveries: z.array(callbackDeliverySchema).describe('one per status change, by sequence'),
    })
    .nullable()
    .describe('null when the request had no Callback.URL'),
});

export type MessageStatusView = z.infer<typeof messageStatusSchema>;

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The message of this tenant and campaign, or undefined (another tenant's or campaign's is undefined too). */
export async function loadMessageStatus(db: Kysely<Database>, tenant: { id: string; clientId: string }, campaignId: string, messageId: string): Promise<MessageStatusView | undefined> {
  const message = await db
    .selectFrom('campaign_messages')
    .selectAll()
    .where('id', '=', messageId)
    .where('tenant_id', '=', tenant.id)
    .where('campaign_id', '=', campaignId)
    .executeTakeFirst();
  if (!message) return undefined;
  const [attempts, calls, callbacks] = await Promise.all([
    db.selectFrom('campaign_attempts').selectAll().where('message_id', '=', messageId).orderBy('attempt_no').execute(),
    db.selectFrom('calls').select(['id', 'attempt']).where('tenant_id', '=', tenant.id).where('message_id', '=', messageId).where('attempt', 'is not', null).execute(),
    db
      .selectFrom('campaign_callbacks')
      .select(['id', 'body', 'tries', 'next_try_at', 'delivered_at', 'given_up_at', 'last_status', 'last_error', 'created_at'])
      .where('message_id', '=', messageId)
      .orderBy('id')
      .execute(),
  ]);
  const callOf = new Map(calls.map((c) => [c.attempt, c.id]));
  const scheduled = message.status === 'scheduled';
  const deliveries = callbacks
    .map((row) => {
      // The body is exactly what the receiver gets (callbacks.ts callbackBody): read its event from it.
      let body: Record<string, unknown> = {};
      try {
        const parsed = JSON.parse(row.body) as unknown;
        if (isObject(parsed)) body = parsed;
      } catch {
        body = {};
      }
      const pending = !row.delivered_at && !row.given_up_at;
      return {
        sequence: Number(body['sequence']),
        event: body['status'] as (typeof callbackStatuses)[number],
        attempt: Number(body['attempt']),
        final: body['final'] === true,
        createdAt: typeof body['timestamp'] === 'string' ? body['timestamp'] : row.created_at.toISOString(),
        delivery: row.delivered_at ? ('delivered' as const) : row.given_up_at ? ('givenUp' as const) : ('pending' as const),
        tries: row.tries,
        lastStatus: row.last_status,
        lastError: row.last_error,
        nextTryAt: pending ? row.next_try_at.toISOString() : null,
        deliveredAt: iso(row.delivered_at),
        givenUpAt: iso(row.given_up_at),
      };
    })
    .sort((a, b) => a.sequence - b.sequence);
  return {
    id: message.id,
    tenant: tenant.clientId,
    campaignId: message.campaign_id,
    to: message.to_e164,
    status: message.status as (typeof messageStatuses)[number],
    final: finalStatuses.has(message.status),
    scheduledAt: message.requested_at.toISOString(),
    bypassCallingWindow: message.bypass_window,
    // Both keep their last values once the message moves on; they mean something only while it waits.
    nextAttemptAt: scheduled ? iso(message.next_attempt_at) : null,
    waitReason: scheduled ? (message.wait_reason as (typeof waitReasons)[number]) : null,
    attemptsMade: message.attempts_made,
    idempotencyKey: message.idempotency_key,
    variables: isObject(message.variables) ? message.variables : {},
    createdAt: message.created_at.toISOString(),
    updatedAt: message.updated_at.toISOString(),
    attempts: attempts.map((a) => ({
      attempt: a.attempt_no,
      status: a.status as (typeof attemptStatuses)[number],
      callerNumber: a.from_e164,
      sipStatus: a.sip_status,
      reason: a.reason,
      startedAt: a.started_at.toISOString(),
      answeredAt: iso(a.answered_at),
      endedAt: iso(a.ended_at),
      callId: callOf.get(a.attempt_no) ?? null,
    })),
    callback: message.callback_url
      ? { url: message.callback_url, state: isObject(message.callback_state) ? message.callback_state : null, deliveries }
      : null,
  };
}
