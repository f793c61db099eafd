import { createHash, randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { AppError } from '../../../core/errors.js';
import { findCampaignForTenant } from '../../model/resources/definitions/lookups.js';
import type { Database } from '../../platform/store/schema.js';
import { callbackBody } from './callbacks.js';
import type { SendMessageRequest } from './send-message-request.js';

/**
 * Stores a validated SendMessage durably (before the response) with its `scheduled` callback in
 * the same transaction. With an idempotency key, a repeated request returns the first
 * message_id instead of creating a second call; the same key with a different body is refused.
 */
export interface AcceptedMessage {
  readonly messageId: string;
  readonly dueAt: number;
  /** False when an earlier request with the same idempotency key already created it. */
  readonly created: boolean;
}

const invalidCampaign = (message: string): AppError => new AppError('invalid_argument', message, { meta: { argument: 'CampaignID' }, issues: [{ path: 'CampaignID', message }] });

export function requestHash(request: SendMessageRequest): string {
  return createHash('sha256').update(JSON.stringify([request.campaignId, request.to, request.variables, request.callback ?? null, request.scheduledAt, request.bypassCallingWindow])).digest('hex');
}

/** The message's first callback (sequence 1), written with the message. */
export function scheduledCallbackBody(id: string, tenantId: string, request: SendMessageRequest, dueAt: number, now: number): Record<string, unknown> {
  return callbackBody(
    { id, tenant_id: tenantId, campaign_id: request.campaignId, to_e164: request.to, callback_url: request.callback?.url ?? null, callback_state: request.callback?.state ?? null },
    { status: 'scheduled', attempt: 0, final: false, nextAttemptAt: dueAt },
    1,
    now,
  );
}

export async function acceptMessage(db: Kysely<Database>, tenantId: string, request: SendMessageRequest, options: { idempotencyKey?: string; now: number }): Promise<AcceptedMessage> {
  // A campaign of another tenant is "not found" for this one: no existence oracle across tenants.
  const campaign = await findCampaignForTenant(db, tenantId, request.campaignId);
  if (!campaign) throw invalidCampaign(`CampaignID ${request.campaignId}: campaign not found`);
  if (!campaign.published) throw invalidCampaign(`CampaignID ${request.campaignId}: campaign is not published (publish it to accept API requests)`);

  const hash = requestHash(request);
  const dueAt = Math.max(request.scheduledAt, options.now);
  const id = randomUUID();
  const key = options.idempotencyKey;
  const callbackState = request.callback?.state !== undefined ? JSON.stringify(request.callback.state) : null;
  const callbackUrl = request.callback?.url ?? null;
  // The `scheduled` callback is the message's first (sequence 1); both rows go in one statement,
  // which is atomic on its own and saves the round trips of an explicit transaction.
  const scheduledCallback = callbackUrl ? JSON.stringify(scheduledCallbackBody(id, tenantId, { ...request, campaignId: campaign.id }, dueAt, options.now)) : null;
  const { rows } = await sql<{ id: string }>`
    WITH m AS (
      INSERT INTO campaign_messages
        (id, tenant_id, campaign_id, to_e164, variables, callback_url, callback_state, requested_at, bypass_window,
         idempotency_key, request_hash, status, next_attempt_at, callback_seq)
      VALUES (${id}, ${tenantId}, ${campaign.id}, ${request.to}, ${JSON.stringify(request.variables)}::jsonb, ${callbackUrl},
         ${callbackState}::jsonb, ${new Date(request.scheduledAt)}, ${request.bypassCallingWindow}, ${key ?? null}, ${hash},
         'scheduled', ${new Date(dueAt)}, ${callbackUrl ? 1 : 0})
      ON CONFLICT (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
      RETURNING id
    ), c AS (
      INSERT INTO campaign_callbacks (message_id, tenant_id, url, body, next_try_at)
      SELECT m.id, ${tenantId}, ${callbackUrl}, ${scheduledCallback}, ${new Date(options.now)} FROM m WHERE ${scheduledCallback}::text IS NOT NULL
    )
    SELECT id FROM m`.execute(db);
  const created = rows.length > 0;
  if (created) return { messageId: id, dueAt, created: true };

  const existing = await db
    .selectFrom('campaign_messages')
    .select(['id', 'request_hash', 'next_attempt_at', 'requested_at'])
    .where('tenant_id', '=', tenantId)
    .where('idempotency_key', '=', key ?? '')
    .executeTakeFirstOrThrow();
  if (existing.request_hash !== hash) {
    throw new AppError('already_exists', 'Idempotency-Key was already used for a different request', { meta: { argument: 'Idempotency-Key' } });
  }
  return { messageId: existing.id, dueAt: existing.next_attempt_at?.getTime() ?? existing.requested_at.getTime(), created: false };
}
