import { createHash, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { AppError } from '../../core/errors.js';
import { findCampaignForTenant } from '../resources/definitions/lookups.js';
import type { Database } from '../store/schema.js';
import { enqueueCallback } from './callbacks.js';
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

function requestHash(request: SendMessageRequest): string {
  return createHash('sha256').update(JSON.stringify([request.campaignId, request.to, request.variables, request.callback ?? null, request.scheduledAt, request.bypassCallingWindow])).digest('hex');
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
  const created = await db.transaction().execute(async (trx) => {
    const row = await trx
      .insertInto('campaign_messages')
      .values({
        id,
        tenant_id: tenantId,
        campaign_id: campaign.id,
        to_e164: request.to,
        variables: JSON.stringify(request.variables),
        callback_url: request.callback?.url ?? null,
        callback_state: request.callback?.state !== undefined ? JSON.stringify(request.callback.state) : null,
        requested_at: new Date(request.scheduledAt),
        bypass_window: request.bypassCallingWindow,
        idempotency_key: key ?? null,
        request_hash: hash,
        status: 'scheduled',
        next_attempt_at: new Date(dueAt),
      })
      .onConflict((oc) => oc.columns(['tenant_id', 'idempotency_key']).where('idempotency_key', 'is not', null).doNothing())
      .returning(['id', 'tenant_id', 'campaign_id', 'to_e164', 'callback_url', 'callback_state'])
      .executeTakeFirst();
    if (!row) return false;
    await enqueueCallback(trx, row, { status: 'scheduled', attempt: 0, final: false, nextAttemptAt: dueAt }, options.now);
    return true;
  });
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
