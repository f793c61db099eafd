import { sql, type Kysely, type Selectable } from 'kysely';
import type { Clock } from '../../../core/clock.js';
import type { Logger } from '../../../core/logger.js';
import { counter, histogram } from '../../../core/metrics.js';
import type { OriginateResult, Originator } from '../../../core/ports/originator.js';
import type { CampaignSpec } from '../../model/domain/campaign.js';
import type { CampaignMessagesTable, Database } from '../../platform/store/schema.js';
import { AttemptOutcomes, type Unanswered } from './attempt-outcomes.js';
import { markDialing, progressMany, type AttemptKey, type Progress } from './attempt-progress.js';
import { activeStatuses } from './claim-context.js';
import { GroupCommit } from './group-commit.js';
import { Limiter } from './limiter.js';

/**
 * Places claimed attempts and records what becomes of them. Per attempt, in order: `dialing`
 * is committed right before the INVITE leaves (so a crash leaves a record of which callees may
 * have rung), then ringing / answered, then the outcome. Every step of a burst of calls is
 * group-committed (a transaction per group, not per call and step): on embedded PGlite, whose one
 * connection serialises all work, per-call transactions queued the outcomes of a burst behind
 * thousands of others, leaving them unrecorded for seconds.
 */
export interface Claim {
  readonly message: Selectable<CampaignMessagesTable>;
  readonly spec: CampaignSpec;
  readonly attemptNo: number;
  readonly from: { e164: string; phoneNumberId: string; sipTrunkId: string | null };
  readonly recipeId: string;
}

export interface AttemptDialerOptions {
  readonly db: Kysely<Database>;
  readonly originator: Originator;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly workerId: string;
  readonly leaseMs: number;
  readonly outcomes: AttemptOutcomes;
  /** Unanswered outcomes settled per transaction at most. */
  readonly outcomeBatchSize: number;
  /** Answered-call transactions (completion) at once. */
  readonly bookkeepingConcurrency: number;
  readonly onCallbacksQueued: () => void;
}

/** Attempts marked `dialing` per transaction at most, and such transactions at once. */
export const markGroupSize = 25;
export const markGroupsInFlight = 2;

const outcomeCount = counter('campaign_attempt_outcomes_total', 'Campaign call attempt outcomes', ['outcome']);
const lateness = histogram('campaign_dial_lateness_seconds', 'Time from an attempt being due to originate() being called', [], [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30]);

export class AttemptDialer {
  private readonly inFlight = new Map<string, { key: AttemptKey; controller: AbortController; done: Promise<void> }>();
  private readonly bookkeeping: Limiter;
  private readonly marks: GroupCommit<AttemptKey, boolean>;
  private readonly progress: GroupCommit<Progress, undefined>;
  private readonly unanswered: GroupCommit<Unanswered, undefined>;

  constructor(private readonly o: AttemptDialerOptions) {
    this.bookkeeping = new Limiter(o.bookkeepingConcurrency);
    this.marks = new GroupCommit({
      flush: (keys) => markDialing(o.db, o.workerId, new Date(o.clock.now() + o.leaseMs), keys),
      // Small groups: a kill between a group's commit and its INVITEs leaves that group's callees
      // recorded as possibly rung (never called again) without a call; fewer at stake per group.
      // Two at once, so a burst's marks do not wait for each other's commits one by one.
      maxBatch: markGroupSize,
      maxConcurrent: markGroupsInFlight,
    });
    this.progress = new GroupCommit({
      flush: async (items) => {
        await this.settleGroup(items, (group) => progressMany(o.db, o.clock, group), 'recording call progress');
        o.onCallbacksQueued();
        return items.map(() => undefined);
      },
      maxBatch: o.outcomeBatchSize,
      maxConcurrent: 1,
    });
    this.unanswered = new GroupCommit({
      flush: async (items) => {
        await this.settleGroup(items, (group) => o.outcomes.finishUnansweredMany(group), 'settling call outcomes');
        return items.map(() => undefined);
      },
      maxBatch: o.outcomeBatchSize,
      maxConcurrent: 1,
    });
  }

  get activeCalls(): number {
    return this.inFlight.size;
  }

  /**
   * Starts placing the attempt (the claim is committed). Resolves once its INVITE has been sent,
   * or the call ended without one; the call itself goes on.
   */
  start(claim: Claim, claimedAt: number): Promise<void> {
    const key = `${claim.message.id}#${claim.attemptNo}`;
    const controller = new AbortController();
    let dispatch: () => void = () => undefined;
    const dispatched = new Promise<void>((resolve) => (dispatch = resolve));
    const done = this.call(claim, claimedAt, controller.signal, dispatch)
      .catch((error: unknown) => this.o.logger.error({ err: error, messageId: claim.message.id, attempt: claim.attemptNo }, 'campaign call bookkeeping failed'))
      .finally(() => {
        dispatch();
        this.inFlight.delete(key);
      });
    this.inFlight.set(key, { key: { messageId: claim.message.id, attemptNo: claim.attemptNo }, controller, done });
    return dispatched;
  }

  /**
   * Extends the leases of the attempts this worker is running, and of no other: an attempt it
   * handed back or gave up on must be left to lapse, so lease recovery can settle it.
   */
  async renewLeases(until: Date): Promise<void> {
    const keys = [...this.inFlight.values()].map((c) => c.key);
    for (let i = 0; i < keys.length; i += 1_000) {
      const values = sql.join(keys.slice(i, i + 1_000).map((k) => sql`(${k.messageId}::uuid, ${k.attemptNo}::int)`));
      await sql`
        UPDATE campaign_attempts a SET lease_until = ${until}
        FROM (VALUES ${values}) AS v(message_id, attempt_no)
        WHERE a.message_id = v.message_id AND a.attempt_no = v.attempt_no AND a.worker_id = ${this.o.workerId}
          AND a.status IN (${sql.join(activeStatuses.map((st) => sql`${st}`))})`.execute(this.o.db);
    }
  }

  /** Resolves when every call this worker placed has been settled in the store. */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight.values()].map((c) => c.done));
  }

  /** Hangs up every call in progress (their outcome is still recorded) and waits for them. */
  async abortAll(reason: Error): Promise<void> {
    for (const call of this.inFlight.values()) call.controller.abort(reason);
    await this.settled();
  }

  /** Waits for the calls for `graceMs`; true when they all ended. */
  async waitFor(graceMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const ended = await Promise.race([this.settled().then(() => true), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), graceMs)))]);
    clearTimeout(timer);
    return ended;
  }

  /** One group; when the server refuses it, each item alone, so one bad value fails only itself. */
  private async settleGroup<T extends { readonly message: { readonly id: string }; readonly attemptNo: number }>(items: readonly T[], write: (group: readonly T[]) => Promise<void>, what: string): Promise<void> {
    try {
      await write(items);
    } catch (error) {
      if (items.length === 1) throw error;
      this.o.logger.warn({ err: error, attempts: items.length }, `${what} failed for a group; writing them one by one`);
      await Promise.allSettled(items.map((item) => write([item]).catch((e: unknown) => this.o.logger.error({ err: e, messageId: item.message.id, attempt: item.attemptNo }, 'campaign call bookkeeping failed'))));
    }
  }

  private async call(claim: Claim, claimedAt: number, signal: AbortSignal, dispatch: () => void): Promise<void> {
    const { message, attemptNo, spec } = claim;
    const due = message.next_attempt_at?.getTime() ?? message.requested_at.getTime();
    lateness.observe(Math.max(0, claimedAt - due) / 1000);
    // State updates of one attempt are applied in order, whatever order the events race in; a
    // step that failed (logged where it was written) does not hold back the ones after it.
    let chain = Promise.resolve();
    const then = (work: () => Promise<void>): Promise<void> => (chain = chain.catch(() => undefined).then(work));
    let result: OriginateResult;
    let notDialled: 'handed-back' | 'unrecorded' | undefined;
    let markError: unknown;
    try {
      result = await this.o.originator.originate({
        from: claim.from,
        to: message.to_e164,
        ringTimeoutMs: spec.ringDurationSeconds * 1000,
        startLogic: spec.startLogic,
        context: { tenantId: message.tenant_id, campaignId: message.campaign_id, messageId: message.id, attempt: attemptNo, recipeId: claim.recipeId, variables: message.variables as Record<string, unknown> },
        signal,
        beforeInvite: async () => {
          let mine: boolean;
          try {
            mine = await this.marks.submit({ messageId: message.id, attemptNo });
          } catch (error) {
            notDialled = 'unrecorded';
            markError = error;
            dispatch();
            throw new Error('could not record the dial, so the INVITE was not sent', { cause: error });
          }
          if (!mine) {
            // The lease lapsed first and recovery handed the attempt back to the queue: another
            // worker places it; this one must neither ring the callee nor touch the attempt.
            notDialled = 'handed-back';
            dispatch();
            throw new Error('the attempt is no longer claimed by this worker (its lease expired)');
          }
          // The originator sends the INVITE as soon as this resolves; the next claim (which on
          // PGlite holds the event loop while it runs) waits until those sends have been made.
          setImmediate(dispatch);
        },
        onRinging: () => void then(() => this.progress.submit({ message, attemptNo, status: 'ringing' })).catch(() => undefined),
      });
    } catch (error) {
      result = { outcome: 'failed', reason: `originator error: ${(error as Error).message ?? String(error)}` };
    }
    dispatch();
    if (notDialled === 'handed-back') return;
    if (notDialled === 'unrecorded') {
      // No INVITE left: back to the queue now rather than after the lease (it is no longer renewed).
      this.o.logger.warn({ err: markError, messageId: message.id, attempt: attemptNo }, 'could not record the dial, so the INVITE was not sent: handing the call back to the queue');
      await this.o.outcomes.release([{ messageId: message.id, attemptNo }], { workerId: this.o.workerId });
      return;
    }
    outcomeCount.inc({ outcome: result.outcome });
    if (result.outcome !== 'answered') {
      const reason = 'reason' in result ? result.reason : undefined;
      const item: Unanswered = {
        message,
        attemptNo,
        spec,
        outcome: result.outcome,
        ...(result.sipStatus !== undefined ? { sipStatus: result.sipStatus } : {}),
        ...(reason !== undefined ? { reason } : {}),
        ...(result.sipCallId !== undefined ? { sipCallId: result.sipCallId } : {}),
      };
      await then(() => this.unanswered.submit(item));
      return;
    }
    await then(() => this.progress.submit({ message, attemptNo, status: 'answered', sipStatus: result.sipStatus }));
    const completion = await result.completion;
    await then(() => this.bookkeeping.run(() => this.o.outcomes.complete(message, attemptNo, completion.reason, completion.durationMs)));
  }
}
