import type { Kysely, Selectable } from 'kysely';
import type { Clock } from '../../core/clock.js';
import type { CampaignSpec } from '../domain/campaign.js';
import type { CampaignMessagesTable, Database } from '../store/schema.js';
import { enqueueCallback, type CallbackEvent, type MessageForCallback } from './callbacks.js';
import { activeStatuses } from './claim-context.js';
import { decideRetry } from './retry-policy.js';

type MessageRow = Selectable<CampaignMessagesTable>;
const forCallback = (m: MessageRow): MessageForCallback => m;

export interface AttemptOutcomesDeps {
  readonly db: Kysely<Database>;
  readonly clock: Clock;
  readonly onCallbacksQueued: () => void;
  readonly enqueue: (messageId: string, at: number) => Promise<void>;
}

/**
 * Records what happened to an attempt, each change in one transaction with its callback. Every
 * update is guarded by the attempt's current status, so a late, repeated or racing report (the
 * live worker and lease recovery) changes nothing twice.
 */
export class AttemptOutcomes {
  constructor(private readonly deps: AttemptOutcomesDeps) {}

  async progress(message: MessageRow, attemptNo: number, status: 'ringing' | 'answered', from: readonly string[], extra: { sipStatus?: number } = {}): Promise<void> {
    const now = this.deps.clock.now();
    await this.deps.db.transaction().execute(async (trx) => {
      const updated = await trx
        .updateTable('campaign_attempts')
        .set({ status, ...(status === 'answered' ? { answered_at: new Date(now) } : {}), ...(extra.sipStatus !== undefined ? { sip_status: extra.sipStatus } : {}) })
        .where('message_id', '=', message.id)
        .where('attempt_no', '=', attemptNo)
        .where('status', 'in', from)
        .executeTakeFirst();
      if (updated.numUpdatedRows === 0n) return;
      await enqueueCallback(trx, forCallback(message), { status, attempt: attemptNo, final: false, ...extra }, now);
    });
    this.deps.onCallbacksQueued();
  }

  async complete(message: MessageRow, attemptNo: number, reason: string, durationMs?: number): Promise<void> {
    const now = this.deps.clock.now();
    await this.deps.db.transaction().execute(async (trx) => {
      await trx.selectFrom('campaign_messages').select('id').where('id', '=', message.id).forUpdate().executeTakeFirst();
      const updated = await trx
        .updateTable('campaign_attempts')
        .set({ status: 'completed', reason, ended_at: new Date(now) })
        .where('message_id', '=', message.id)
        .where('attempt_no', '=', attemptNo)
        .where('status', '=', 'answered')
        .executeTakeFirst();
      if (updated.numUpdatedRows === 0n) return;
      await trx.updateTable('campaign_messages').set({ status: 'completed', updated_at: new Date(now) }).where('id', '=', message.id).execute();
      await enqueueCallback(trx, forCallback(message), { status: 'completed', attempt: attemptNo, final: true, reason, ...(durationMs !== undefined ? { durationMs } : {}) }, now);
    });
    this.deps.onCallbacksQueued();
  }

  async finishUnanswered(message: MessageRow, attemptNo: number, spec: CampaignSpec, outcome: 'busy' | 'no-answer' | 'failed', sipStatus?: number, reason?: string): Promise<void> {
    const now = this.deps.clock.now();
    const decision = decideRetry(spec, attemptNo, outcome, now);
    const settled = await this.deps.db.transaction().execute(async (trx) => {
      await trx.selectFrom('campaign_messages').select('id').where('id', '=', message.id).forUpdate().executeTakeFirst();
      const updated = await trx
        .updateTable('campaign_attempts')
        .set({ status: outcome, sip_status: sipStatus ?? null, reason: reason ?? null, ended_at: new Date(now) })
        .where('message_id', '=', message.id)
        .where('attempt_no', '=', attemptNo)
        .where('status', 'in', activeStatuses)
        .executeTakeFirst();
      if (updated.numUpdatedRows === 0n) return false;
      const event: CallbackEvent = { status: outcome, attempt: attemptNo, final: !decision.retry, ...(sipStatus !== undefined ? { sipStatus } : {}), ...(reason !== undefined ? { reason } : {}) };
      await enqueueCallback(trx, forCallback(message), event, now);
      if (decision.retry) {
        await trx.updateTable('campaign_messages').set({ status: 'scheduled', next_attempt_at: new Date(decision.at), wait_reason: 'retry', updated_at: new Date(now) }).where('id', '=', message.id).execute();
        await enqueueCallback(trx, forCallback(message), { status: 'rescheduled', attempt: attemptNo + 1, final: false, reason: `retry after ${outcome}`, nextAttemptAt: decision.at }, now);
      } else {
        await trx.updateTable('campaign_messages').set({ status: outcome, updated_at: new Date(now) }).where('id', '=', message.id).execute();
      }
      return true;
    });
    this.deps.onCallbacksQueued();
    if (settled && decision.retry) await this.deps.enqueue(message.id, decision.at);
  }
}
