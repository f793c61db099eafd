import { sql, type Kysely, type Selectable } from 'kysely';
import { recordUnconnectedCalls } from './unconnected-calls.js';
import type { Clock } from '../../../core/clock.js';
import type { CampaignSpec } from '../../model/domain/campaign.js';
import type { CampaignMessagesTable, Database } from '../../platform/store/schema.js';
import { callbackBody, enqueueCallback, type CallbackEvent, type MessageForCallback } from './callbacks.js';
import { activeStatuses } from './claim-context.js';
import { decideRetry } from './retry-policy.js';

type MessageRow = Selectable<CampaignMessagesTable>;
const forCallback = (m: MessageRow): MessageForCallback => m;

export type UnansweredOutcome = 'busy' | 'no-answer' | 'failed';

export interface Unanswered {
  readonly message: MessageRow;
  readonly attemptNo: number;
  readonly spec: CampaignSpec;
  readonly outcome: UnansweredOutcome;
  readonly sipStatus?: number;
  readonly reason?: string;
  /** The INVITE's Call-ID, when one went out: stored on the attempt's call record. */
  readonly sipCallId?: string;
  /** No retry whatever the campaign says (an attempt lost with its worker: the callee may have rung). */
  readonly final?: boolean;
}

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

  /**
   * Hands attempts whose INVITE never left (still `claimed`) back to the queue: the attempt row
   * goes, so its number is used again, and the message is due now, for any worker. `workerId`
   * releases only that worker's own claims; `expiredBefore` only claims whose lease lapsed
   * before then (a dead worker's). Returns the messages handed back.
   */
  async release(keys: ReadonlyArray<{ readonly messageId: string; readonly attemptNo: number }>, guard: { readonly workerId?: string; readonly expiredBefore?: Date }): Promise<string[]> {
    if (keys.length === 0) return [];
    const now = new Date(this.deps.clock.now());
    const released = await this.deps.db.transaction().execute(async (trx) => {
      const ids = [...new Set(keys.map((k) => k.messageId))].sort();
      await trx.selectFrom('campaign_messages').select('id').where('id', 'in', ids).orderBy('id').forUpdate().execute();
      const values = sql.join(keys.map((k) => sql`(${k.messageId}::uuid, ${k.attemptNo}::int)`));
      const { rows } = await sql<{ id: string }>`
        WITH gone AS (
          DELETE FROM campaign_attempts a USING (VALUES ${values}) AS v(message_id, attempt_no)
          WHERE a.message_id = v.message_id AND a.attempt_no = v.attempt_no AND a.status = 'claimed'
            ${guard.workerId !== undefined ? sql`AND a.worker_id = ${guard.workerId}` : sql``}
            ${guard.expiredBefore !== undefined ? sql`AND a.lease_until < ${guard.expiredBefore}` : sql``}
          RETURNING a.message_id, a.attempt_no
        )
        UPDATE campaign_messages m SET status = 'scheduled', attempts_made = gone.attempt_no - 1, next_attempt_at = ${now}, updated_at = ${now}
        FROM gone WHERE m.id = gone.message_id AND m.status = 'calling'
        RETURNING m.id`.execute(trx);
      return rows.map((r) => r.id);
    });
    await Promise.all(released.map((id) => this.deps.enqueue(id, now.getTime())));
    return released;
  }

  async finishUnanswered(message: MessageRow, attemptNo: number, spec: CampaignSpec, outcome: UnansweredOutcome, sipStatus?: number, reason?: string): Promise<void> {
    await this.finishUnansweredMany([{ message, attemptNo, spec, outcome, ...(sipStatus !== undefined ? { sipStatus } : {}), ...(reason !== undefined ? { reason } : {}) }]);
  }

  /**
   * Settles many unanswered attempts in one transaction with multi-row statements (a burst of
   * busy outcomes must not cost a transaction each). Per attempt the effect is exactly that of
   * settling it alone: only an attempt still active changes, its message becomes final or is
   * rescheduled for a retry, its callbacks take the message's next sequence numbers, and its call
   * record is written (so an attempt that never connected is listed once, with its outcome).
   */
  async finishUnansweredMany(items: readonly Unanswered[]): Promise<void> {
    if (items.length === 0) return;
    const now = this.deps.clock.now();
    // The same attempt twice in one group: the second report would find it settled already.
    const seen = new Set<string>();
    const unique = items.filter((item) => {
      const key = `${item.message.id}#${item.attemptNo}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    const decided = unique.map((item) => ({ item, decision: item.final ? ({ retry: false } as const) : decideRetry(item.spec, item.attemptNo, item.outcome, now) }));
    const settled = await this.deps.db.transaction().execute(async (trx) => {
      // Message rows first, in id order: the same lock order as every other writer of a batch.
      const ids = [...new Set(unique.map((i) => i.message.id))].sort();
      await trx.selectFrom('campaign_messages').select('id').where('id', 'in', ids).orderBy('id').forUpdate().execute();
      const attempts = sql.join(decided.map(({ item }) => sql`(${item.message.id}::uuid, ${item.attemptNo}::int, ${item.outcome}::text, ${item.sipStatus ?? null}::int, ${item.reason ?? null}::text)`));
      const { rows } = await sql<{ message_id: string; attempt_no: number }>`
        UPDATE campaign_attempts a SET status = v.status, sip_status = v.sip_status, reason = v.reason, ended_at = ${new Date(now)}
        FROM (VALUES ${attempts}) AS v(message_id, attempt_no, status, sip_status, reason)
        WHERE a.message_id = v.message_id AND a.attempt_no = v.attempt_no AND a.status IN (${sql.join(activeStatuses.map((st) => sql`${st}`))})
        RETURNING a.message_id, a.attempt_no`.execute(trx);
      const done = new Set(rows.map((r) => `${r.message_id}#${r.attempt_no}`));
      const changed = decided.filter(({ item }) => done.has(`${item.message.id}#${item.attemptNo}`));
      if (changed.length === 0) return changed;
      const events = changed.map(({ item, decision }) => {
        const { message, attemptNo, outcome, sipStatus, reason } = item;
        const list: CallbackEvent[] = message.callback_url ? [{ status: outcome, attempt: attemptNo, final: !decision.retry, ...(sipStatus !== undefined ? { sipStatus } : {}), ...(reason !== undefined ? { reason } : {}) }] : [];
        if (message.callback_url && decision.retry) list.push({ status: 'rescheduled', attempt: attemptNo + 1, final: false, reason: `retry after ${outcome}`, nextAttemptAt: decision.at });
        return list;
      });
      const messages = sql.join(
        changed.map(({ item, decision }, i) =>
          decision.retry
            ? sql`(${item.message.id}::uuid, 'scheduled'::text, ${new Date(decision.at)}::timestamptz, 'retry'::text, ${events[i]!.length}::int)`
            : sql`(${item.message.id}::uuid, ${item.outcome}::text, NULL::timestamptz, NULL::text, ${events[i]!.length}::int)`,
        ),
      );
      const { rows: seqs } = await sql<{ id: string; callback_seq: number }>`
        UPDATE campaign_messages m SET status = v.status, next_attempt_at = COALESCE(v.next_attempt_at, m.next_attempt_at),
          wait_reason = COALESCE(v.wait_reason, m.wait_reason), callback_seq = m.callback_seq + v.callbacks, updated_at = ${new Date(now)}
        FROM (VALUES ${messages}) AS v(id, status, next_attempt_at, wait_reason, callbacks)
        WHERE m.id = v.id
        RETURNING m.id, m.callback_seq`.execute(trx);
      const lastSeq = new Map(seqs.map((r) => [r.id, Number(r.callback_seq)]));
      const callbacks = changed.flatMap(({ item }, i) => {
        const list = events[i]!;
        const last = lastSeq.get(item.message.id) ?? 0;
        return list.map((event, k) => ({
          message_id: item.message.id,
          tenant_id: item.message.tenant_id,
          url: item.message.callback_url!,
          body: JSON.stringify(callbackBody(forCallback(item.message), event, last - list.length + 1 + k, now)),
          next_try_at: new Date(now),
        }));
      });
      for (let i = 0; i < callbacks.length; i += 500) await trx.insertInto('campaign_callbacks').values(callbacks.slice(i, i + 500)).execute();
      await recordUnconnectedCalls(trx, changed.map(({ item }) => item), now);
      return changed;
    });
    this.deps.onCallbacksQueued();
    await Promise.all(settled.filter(({ decision }) => decision.retry).map(({ item, decision }) => this.deps.enqueue(item.message.id, (decision as { at: number }).at)));
  }
}
