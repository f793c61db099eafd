import type { Kysely, Transaction } from 'kysely';
import { systemClock, type Clock } from '../../../core/clock.js';
import { AppError, notFound } from '../../../core/errors.js';
import type { InsightParameter } from '../../model/domain/insight-parameter.js';
import type { Database } from '../../platform/store/schema.js';
import { isUuid, toCallRecord } from './call-repository.js';
import type { CallEnd, CallRecord, CallStart } from './call-types.js';

/**
 * The API the gateway, the campaign scheduler and the simulator call around a call:
 * `startCall` when it begins (so a live call is listed), `completeCall` at hang-up, or
 * `recordCall` for both at once (a dial that never connected, a finished simulation).
 *
 * Hang-up stores the record, the transcript and the recipe's path and hands a conversation to
 * `onConversationEnded` in the same transaction (insights queues its analysis there: see
 * insights/queue-call-analysis.ts), so a crash right after hang-up can neither lose the analysis
 * nor analyse a half-written call.
 */
export interface CallRecorderOptions {
  readonly db: Kysely<Database>;
  readonly clock?: Clock;
  /** Called in the storing transaction for a call that was a conversation (answered and completed). */
  readonly onConversationEnded: ConversationEnded;
  /** Told after that transaction committed, so an in-process worker starts at once instead of at its next poll. */
  readonly onAnalysisQueued?: () => void;
}

/** A conversation that just ended, as the recorder stored it. */
export interface EndedConversation {
  readonly callId: string;
  readonly tenantId: string;
  readonly recipeId: string | null;
  readonly endedAt: Date;
  /** The recorder's clock at storing time (ms since epoch). */
  readonly now: number;
  /** What the call's recipe asked to extract, when the caller of the recorder knew it. */
  readonly insightParameters?: readonly InsightParameter[];
}

export type ConversationEnded = (trx: Transaction<Database>, ended: EndedConversation) => Promise<void>;

export class CallRecorder {
  private readonly clock: Clock;

  constructor(private readonly options: CallRecorderOptions) {
    this.clock = options.clock ?? systemClock;
  }

  /** Stores a call that has begun; returns its id. */
  async startCall(start: CallStart): Promise<string> {
    const row = await this.options.db
      .insertInto('calls')
      .values({ ...startColumns(start), status: 'in_progress', analysis_status: 'pending' })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  /**
   * Records the end of a started call and queues its analysis. Idempotent: completing a call
   * that has already ended returns the stored record unchanged.
   */
  async completeCall(callId: string, end: CallEnd): Promise<CallRecord> {
    if (!isUuid(callId)) throw notFound(`call "${callId}"`);
    const record = await this.options.db.transaction().execute(async (trx) => {
      const current = await trx.selectFrom('calls').selectAll().where('id', '=', callId).forUpdate().executeTakeFirst();
      if (!current) throw notFound(`call "${callId}"`);
      if (current.status === 'ended') return { record: toCallRecord(current), queued: false };
      const queued = await this.finish(trx, callId, current.tenant_id, current.recipe_id, current.started_at, end);
      const row = await trx.selectFrom('calls').selectAll().where('id', '=', callId).executeTakeFirstOrThrow();
      return { record: toCallRecord(row), queued };
    });
    if (record.queued) this.options.onAnalysisQueued?.();
    return record.record;
  }

  /** Stores a whole call in one step (start and end known together). */
  async recordCall(call: CallStart & CallEnd): Promise<CallRecord> {
    const result = await this.options.db.transaction().execute(async (trx) => {
      const inserted = await trx
        .insertInto('calls')
        .values({ ...startColumns(call), status: 'in_progress', analysis_status: 'pending' })
        .returning('id')
        .executeTakeFirstOrThrow();
      const queued = await this.finish(trx, inserted.id, call.tenantId, call.recipeId ?? null, call.startedAt, call);
      const row = await trx.selectFrom('calls').selectAll().where('id', '=', inserted.id).executeTakeFirstOrThrow();
      return { record: toCallRecord(row), queued };
    });
    if (result.queued) this.options.onAnalysisQueued?.();
    return result.record;
  }

  private async finish(trx: Transaction<Database>, callId: string, tenantId: string, recipeId: string | null, startedAt: Date, end: CallEnd): Promise<boolean> {
    if (end.endedAt.getTime() < startedAt.getTime()) throw new AppError('invalid_argument', 'a call cannot end before it started');
    const answeredAt = end.answeredAt ?? (end.outcome === 'completed' ? startedAt : undefined);
    const transcript = end.transcript ?? [];
    // Only a conversation can be analysed; a busy or unanswered dial has nothing to extract from.
    const analyse = end.outcome === 'completed';
    await trx
      .updateTable('calls')
      .set({
        status: 'ended',
        ended_at: end.endedAt,
        answered_at: answeredAt ?? null,
        outcome: end.outcome,
        sip_status: end.sipStatus ?? null,
        duration_ms: answeredAt ? Math.max(0, end.endedAt.getTime() - answeredAt.getTime()) : 0,
        end_reason: end.endReason ?? null,
        disposition: end.disposition ?? null,
        ...(end.variables ? { variables: JSON.stringify(end.variables) } : {}),
        recording_ref: end.recordingRef ?? null,
        amd_verdict: end.answeringMachine?.verdict ?? null,
        amd_ms: end.answeringMachine ? Math.max(0, Math.round(end.answeringMachine.afterMs)) : null,
        analysis_status: analyse ? 'analyzing' : 'skipped',
        updated_at: new Date(this.clock.now()),
      })
      .where('id', '=', callId)
      .execute();
    const stored = { entries: JSON.stringify(transcript), steps: JSON.stringify(end.steps ?? []) };
    await trx
      .insertInto('call_transcripts')
      .values({ call_id: callId, ...stored })
      .onConflict((oc) => oc.column('call_id').doUpdateSet(stored))
      .execute();
    if (!analyse) return false;
    await this.options.onConversationEnded(trx, {
      callId,
      tenantId,
      recipeId,
      endedAt: end.endedAt,
      now: this.clock.now(),
      ...(end.insightParameters ? { insightParameters: end.insightParameters } : {}),
    });
    return true;
  }
}

function startColumns(start: CallStart) {
  return {
    ...(start.id ? { id: start.id } : {}),
    sip_call_id: start.sipCallId ?? null,
    sip_transport: start.sip?.transport ?? null,
    sip_remote_address: start.sip?.remoteAddress ?? null,
    codec: start.sip?.codec ?? null,
    tenant_id: start.tenantId,
    direction: start.direction,
    started_at: start.startedAt,
    phone_number_id: start.phoneNumberId ?? null,
    phone_number: start.phoneNumber ?? null,
    remote_number: start.remoteNumber ?? null,
    campaign_id: start.campaignId ?? null,
    message_id: start.messageId ?? null,
    attempt: start.attempt ?? null,
    recipe_id: start.recipeId ?? null,
    language: start.language ?? null,
    variables: JSON.stringify(start.variables ?? {}),
  };
}
