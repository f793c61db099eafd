import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { Clock, TimerHandle } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import { counter, histogram } from '../../core/metrics.js';
import type { OriginateResult, Originator } from '../../core/ports/originator.js';
import { campaignSchema, type CampaignSpec } from '../domain/campaign.js';
import type { CampaignMessagesTable, Database } from '../store/schema.js';
import { enqueueCallback, type MessageForCallback } from './callbacks.js';
import { AttemptOutcomes, type Unanswered } from './attempt-outcomes.js';
import { GroupCommit } from './group-commit.js';
import { Limiter } from './limiter.js';
import { nextOpening } from './working-window.js';
import { activeStatuses, belowLimits, campaignContext, type CampaignContext } from './claim-context.js';

/**
 * Places campaign calls. A job (Agenda or the store poller) calls `runMessage(id)` when a message
 * may be due; everything else is decided here under a row lock on the message, so the decision
 * is the same however many times and on however many workers the job fires:
 *  - not due / not scheduled: nothing happens;
 *  - outside the working window: reschedule to the next opening or discard (campaign DND setting);
 *  - at a concurrency limit: stay queued and look again shortly;
 *  - otherwise claim the attempt by inserting the (message_id, attempt_no) row, commit, then dial.
 * An attempt row carries a lease the dialing worker renews; an expired lease means the worker
 * died mid-attempt and `recoverExpired` settles it (answered: completed; else failed + retry policy).
 */
export type RunResult = 'locked' | 'not-scheduled' | 'not-due' | 'rescheduled' | 'discarded' | 'queued' | 'dialing' | 'duplicate';

export interface CampaignSchedulerOptions {
  readonly db: Kysely<Database>;
  readonly originator: Originator;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Identifies this worker's leases. */
  readonly workerId: string;
  /** Default 60 s; renewed every leaseMs / 3 while a call is in progress. */
  readonly leaseMs?: number;
  /** How soon a message held back by a concurrency limit is looked at again; default 1 s. */
  readonly queueRecheckMs?: number;
  /** Makes sure a job fires at `dueAt` (Agenda job); the poller finds it anyway. */
  readonly enqueue?: (messageId: string, dueAt: number) => Promise<void>;
  /** Outcome transactions run at once; default 4 (leave pooled connections for claiming). */
  readonly bookkeepingConcurrency?: number;
  /** Unanswered outcomes settled per transaction at most; default 500. */
  readonly outcomeBatchSize?: number;
  /** Called after callbacks were queued, to wake the delivery loop. */
  readonly onCallbacksQueued?: () => void;
}

type MessageRow = Selectable<CampaignMessagesTable>;

interface Claim {
  readonly message: MessageRow;
  readonly spec: CampaignSpec;
  readonly attemptNo: number;
  readonly from: { e164: string; phoneNumberId: string; sipTrunkId: string | null };
  readonly recipeId: string;
}

interface PendingClaim {
  readonly followUp: FollowUp;
  readonly claim: Claim;
}

interface FollowUp {
  readonly messageId: string;
  result?: RunResult;
  enqueueAt?: number;
  callbacks: boolean;
  claim?: Claim;
}

const runs = counter('campaign_runs_total', 'Campaign message job runs by result', ['result']);
const outcomes = counter('campaign_attempt_outcomes_total', 'Campaign call attempt outcomes', ['outcome']);
const lateness = histogram('campaign_dial_lateness_seconds', 'Time from an attempt being due to originate() being called', [], [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30]);

const forCallback = (m: MessageRow): MessageForCallback => m;

export class CampaignScheduler {
  private readonly inFlight = new Map<string, { controller: AbortController; done: Promise<void> }>();
  private heartbeat: TimerHandle | undefined;
  // Outcome transactions of a burst of calls must not take every pooled connection: claiming the
  // next calls is what keeps them on time.
  private readonly bookkeeping: Limiter;
  private readonly outcomes: AttemptOutcomes;
  // Unanswered outcomes (a burst of busy / failed calls) are settled in groups, one transaction each.
  private readonly unanswered: GroupCommit<Unanswered, undefined>;
  private stopping = false;

  constructor(private readonly options: CampaignSchedulerOptions) {
    this.bookkeeping = new Limiter(options.bookkeepingConcurrency ?? 4);
    this.outcomes = new AttemptOutcomes({
      db: options.db,
      clock: options.clock,
      onCallbacksQueued: () => options.onCallbacksQueued?.(),
      enqueue: (id, at) => this.enqueue(id, at),
    });
    this.unanswered = new GroupCommit({
      flush: async (items) => {
        try {
          await this.outcomes.finishUnansweredMany(items);
        } catch (error) {
          if (items.length === 1) throw error;
          // One attempt's value the server refuses must not leave the whole group unsettled
          // (until its leases expire): settle each alone; only the offending one fails.
          this.options.logger.warn({ err: error, attempts: items.length }, 'settling a group of call outcomes failed; settling them one by one');
          await Promise.allSettled(items.map((item) => this.outcomes.finishUnansweredMany([item]).catch((e: unknown) => this.options.logger.error({ err: e, messageId: item.message.id, attempt: item.attemptNo }, 'campaign call bookkeeping failed'))));
        }
        return items.map(() => undefined);
      },
      maxBatch: options.outcomeBatchSize ?? 500,
      maxConcurrent: 1,
    });
  }

  private get leaseMs(): number {
    return this.options.leaseMs ?? 60_000;
  }

  start(): void {
    this.stopping = false;
    this.scheduleHeartbeat();
  }

  /** Lets calls in progress finish for `graceMs`, then hangs up the rest (their outcome is still recorded). */
  async stop(graceMs = 0): Promise<void> {
    this.stopping = true;
    if (this.heartbeat) this.options.clock.clearTimeout(this.heartbeat);
    const all = Promise.all([...this.inFlight.values()].map((c) => c.done));
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([all.then(() => false), new Promise<boolean>((r) => (timer = setTimeout(() => r(true), graceMs)))]);
    clearTimeout(timer);
    if (timedOut) {
      for (const call of this.inFlight.values()) call.controller.abort(new Error('worker stopping'));
      await all;
    }
  }

  /** Resolves when every call this worker placed has been settled in the store. */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight.values()].map((c) => c.done));
  }

  get activeCalls(): number {
    return this.inFlight.size;
  }

  async runMessage(messageId: string): Promise<RunResult> {
    if (this.stopping) return 'locked';
    const now = this.options.clock.now();
    const followUps: FollowUp[] = [];
    const result = await this.options.db.transaction().execute(async (trx): Promise<RunResult> => {
      const message = await trx.selectFrom('campaign_messages').selectAll().where('id', '=', messageId).forUpdate().skipLocked().executeTakeFirst();
      const followUp: FollowUp = { messageId, callbacks: false };
      followUps.push(followUp);
      if (!message) {
        // Another worker holds the row (usually placing this very call); look again shortly in case it was not.
        followUp.enqueueAt = now + 1_000;
        return 'locked';
      }
      if (message.status !== 'scheduled') return 'not-scheduled';
      if (message.next_attempt_at && message.next_attempt_at.getTime() > now) {
        // A timer may fire a little early; make sure a job exists for the real due time.
        if (message.next_attempt_at.getTime() - now < 5_000) followUp.enqueueAt = message.next_attempt_at.getTime();
        return 'not-due';
      }
      return this.decide(trx, message, now, followUp, new Map());
    });
    for (const f of followUps) f.result ??= result;
    await this.afterCommit(followUps, now);
    this.options.logger.debug({ messageId, result }, 'campaign message run');
    return result;
  }

  /**
   * Claims up to `limit` due messages in one transaction (one commit for the whole batch, which
   * is what keeps a burst of calls due at the same instant on time). Rows other workers hold are
   * skipped. Returns how many messages were decided.
   */
  async runDueBatch(limit = 200, graceMs = 0): Promise<number> {
    if (this.stopping) return 0;
    const now = this.options.clock.now();
    const followUps: FollowUp[] = [];
    const decided = await this.options.db.transaction().execute(async (trx) => {
      const due = await trx
        .selectFrom('campaign_messages')
        .selectAll()
        .where('status', '=', 'scheduled')
        .where('next_attempt_at', '<=', new Date(now - graceMs))
        .orderBy('next_attempt_at')
        .limit(limit)
        .forUpdate()
        .skipLocked()
        .execute();
      const campaigns = new Map<string, CampaignContext>();
      const pending: PendingClaim[] = [];
      for (const message of due) {
        const followUp: FollowUp = { messageId: message.id, callbacks: false };
        followUps.push(followUp);
        await this.decide(trx, message, now, followUp, campaigns, pending);
      }
      await this.flushClaims(trx, pending, now);
      return due.length;
    });
    await this.afterCommit(followUps, now);
    return decided;
  }

  private async afterCommit(followUps: readonly FollowUp[], now: number): Promise<void> {
    if (followUps.some((f) => f.callbacks)) this.options.onCallbacksQueued?.();
    for (const followUp of followUps) {
      if (followUp.result) runs.inc({ result: followUp.result });
      if (followUp.claim) this.startCall(followUp.claim, now);
    }
    await Promise.all(followUps.filter((f) => f.enqueueAt !== undefined).map((f) => this.enqueue(f.messageId, f.enqueueAt!)));
  }

  /** The decision for one due, locked, scheduled message (see the class comment). */
  private async decide(trx: Transaction<Database>, message: MessageRow, now: number, followUp: FollowUp, cache: Map<string, CampaignContext>, pending?: PendingClaim[]): Promise<RunResult> {
    const campaign = await campaignContext(trx, message, cache);
    const { spec } = campaign;
    const attemptNo = message.attempts_made + 1;
    const done = (result: RunResult): RunResult => {
      followUp.result = result;
      return result;
    };
    const discard = async (reason: string): Promise<RunResult> => {
      await trx.updateTable('campaign_messages').set({ status: 'discarded', next_attempt_at: null, updated_at: new Date(now) }).where('id', '=', message.id).execute();
      await enqueueCallback(trx, forCallback(message), { status: 'discarded', attempt: message.attempts_made, final: true, reason }, now);
      followUp.callbacks = true;
      return done('discarded');
    };
    if (!campaign.published) return discard('the campaign is no longer published');
    if (!campaign.enabled) return discard(`the campaign's number ${campaign.e164} is disabled`);

    // BypassCallingWindow places the requested call at its exact time; retries honour the window.
    if (!(message.bypass_window && attemptNo === 1)) {
      if (!campaign.window) return discard(`business-hours profile '${spec.workingWindow.profile ?? ''}' not found`);
      const opening = nextOpening(campaign.window, now);
      if (opening !== now) {
        if (spec.dndBehaviour === 'discard') return discard('outside the working window (DND: discard)');
        if (opening === undefined) return discard('the working window never opens');
        await trx.updateTable('campaign_messages').set({ next_attempt_at: new Date(opening), wait_reason: 'window', updated_at: new Date(now) }).where('id', '=', message.id).execute();
        await enqueueCallback(trx, forCallback(message), { status: 'rescheduled', attempt: attemptNo, final: false, reason: 'outside the working window', nextAttemptAt: opening }, now);
        followUp.callbacks = true;
        followUp.enqueueAt = opening;
        return done('rescheduled');
      }
    }

    if (!(await belowLimits(trx, message.campaign_id, campaign.e164, spec))) {
      const at = now + (this.options.queueRecheckMs ?? 1_000);
      await trx.updateTable('campaign_messages').set({ next_attempt_at: new Date(at), wait_reason: 'concurrency', updated_at: new Date(now) }).where('id', '=', message.id).execute();
      followUp.enqueueAt = at;
      return done('queued');
    }

    const claim: Claim = {
      message,
      spec,
      attemptNo,
      from: { e164: campaign.e164, phoneNumberId: campaign.number_id, sipTrunkId: campaign.sip_trunk_id },
      recipeId: campaign.recipe_id,
    };
    // Without limits nothing depends on the claims before it, so they are written in bulk.
    if (pending && spec.maxConcurrentCalls === undefined && spec.maxConcurrentCallsPerNumber === undefined) {
      pending.push({ followUp, claim });
      return done('dialing');
    }
    const inserted = await trx
      .insertInto('campaign_attempts')
      .values({
        message_id: message.id,
        attempt_no: attemptNo,
        campaign_id: message.campaign_id,
        from_e164: campaign.e164,
        status: 'dialing',
        worker_id: this.options.workerId,
        lease_until: new Date(now + this.leaseMs),
        started_at: new Date(now),
      })
      .onConflict((oc) => oc.columns(['message_id', 'attempt_no']).doNothing())
      .returning('attempt_no')
      .executeTakeFirst();
    if (!inserted) return done('duplicate');
    await trx.updateTable('campaign_messages').set({ status: 'calling', attempts_made: attemptNo, updated_at: new Date(now) }).where('id', '=', message.id).execute();
    followUp.claim = claim;
    return done('dialing');
  }

  /** Writes the attempt rows of a batch at once (the rows are locked, so attempt numbers are current). */
  private async flushClaims(trx: Transaction<Database>, pending: readonly PendingClaim[], now: number): Promise<void> {
    for (let i = 0; i < pending.length; i += 500) {
      const chunk = pending.slice(i, i + 500);
      const rows = await trx
        .insertInto('campaign_attempts')
        .values(
          chunk.map(({ claim }) => ({
            message_id: claim.message.id,
            attempt_no: claim.attemptNo,
            campaign_id: claim.message.campaign_id,
            from_e164: claim.from.e164,
            status: 'dialing',
            worker_id: this.options.workerId,
            lease_until: new Date(now + this.leaseMs),
            started_at: new Date(now),
          })),
        )
        .onConflict((oc) => oc.columns(['message_id', 'attempt_no']).doNothing())
        .returning('message_id')
        .execute();
      const inserted = new Set(rows.map((r) => r.message_id));
      if (inserted.size > 0) {
        await trx
          .updateTable('campaign_messages')
          .set({ status: 'calling', attempts_made: sql<number>`attempts_made + 1`, updated_at: new Date(now) })
          .where('id', 'in', [...inserted])
          .execute();
      }
      for (const { followUp, claim } of chunk) {
        if (inserted.has(claim.message.id)) followUp.claim = claim;
        else followUp.result = 'duplicate';
      }
    }
  }

  private async enqueue(messageId: string, at: number): Promise<void> {
    try {
      await this.options.enqueue?.(messageId, at);
    } catch (error) {
      // The store poller's reconciliation pass still finds the message; log and move on.
      this.options.logger.warn({ err: error, messageId }, 'could not enqueue campaign job; the store poller will pick it up');
    }
  }

  private startCall(claim: Claim, claimedAt: number): void {
    const key = `${claim.message.id}#${claim.attemptNo}`;
    const controller = new AbortController();
    const done = this.call(claim, claimedAt, controller.signal)
      .catch((error: unknown) => this.options.logger.error({ err: error, messageId: claim.message.id, attempt: claim.attemptNo }, 'campaign call bookkeeping failed'))
      .finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, { controller, done });
  }

  private async call(claim: Claim, claimedAt: number, signal: AbortSignal): Promise<void> {
    const { message, attemptNo, spec } = claim;
    const due = message.next_attempt_at?.getTime() ?? message.requested_at.getTime();
    lateness.observe(Math.max(0, claimedAt - due) / 1000);
    // State updates of one attempt are applied in order, whatever order the events race in.
    let chain = Promise.resolve();
    const step = (work: () => Promise<void>): Promise<void> => (chain = chain.then(() => this.bookkeeping.run(work)));
    let result: OriginateResult;
    try {
      result = await this.options.originator.originate({
        from: claim.from,
        to: message.to_e164,
        ringTimeoutMs: spec.ringDurationSeconds * 1000,
        startLogic: spec.startLogic,
        context: { tenantId: message.tenant_id, campaignId: message.campaign_id, messageId: message.id, attempt: attemptNo, recipeId: claim.recipeId, variables: message.variables as Record<string, unknown> },
        signal,
        onRinging: () => void step(() => this.outcomes.progress(message, attemptNo, 'ringing', ['dialing'])).catch(() => undefined),
      });
    } catch (error) {
      result = { outcome: 'failed', reason: `originator error: ${(error as Error).message ?? String(error)}` };
    }
    outcomes.inc({ outcome: result.outcome });
    if (result.outcome !== 'answered') {
      const reason = 'reason' in result ? result.reason : undefined;
      const item: Unanswered = { message, attemptNo, spec, outcome: result.outcome, ...(result.sipStatus !== undefined ? { sipStatus: result.sipStatus } : {}), ...(reason !== undefined ? { reason } : {}) };
      // Not through the bookkeeping limiter: the group commit itself bounds the transactions.
      await (chain = chain.then(() => this.unanswered.submit(item)));
      return;
    }
    await step(() => this.outcomes.progress(message, attemptNo, 'answered', ['dialing', 'ringing'], { sipStatus: result.sipStatus }));
    const completion = await result.completion;
    await step(() => this.outcomes.complete(message, attemptNo, completion.reason, completion.durationMs));
  }

  private scheduleHeartbeat(): void {
    const every = Math.max(50, Math.floor(this.leaseMs / 3));
    this.heartbeat = this.options.clock.setTimeout(() => {
      void this.renewLeases()
        .catch((error: unknown) => this.options.logger.warn({ err: error }, 'could not renew campaign call leases'))
        .finally(() => {
          if (!this.stopping) this.scheduleHeartbeat();
        });
    }, every);
  }

  /** Extends the lease of every attempt this worker is still running. */
  async renewLeases(): Promise<void> {
    if (this.inFlight.size === 0) return;
    await this.options.db
      .updateTable('campaign_attempts')
      .set({ lease_until: new Date(this.options.clock.now() + this.leaseMs) })
      .where('worker_id', '=', this.options.workerId)
      .where('status', 'in', activeStatuses)
      .execute();
  }

  /**
   * Settles attempts whose worker stopped renewing the lease (crashed or was cut off): an answered
   * call is recorded as completed; anything earlier as failed, retried if the campaign says so.
   * The attempt number stays used, so the same attempt is never placed twice.
   */
  async recoverExpired(limit = 100): Promise<number> {
    const now = new Date(this.options.clock.now());
    const expired = await this.options.db
      .selectFrom('campaign_attempts')
      .innerJoin('campaign_messages', 'campaign_messages.id', 'campaign_attempts.message_id')
      .innerJoin('campaigns', 'campaigns.id', 'campaign_messages.campaign_id')
      .select(['campaign_attempts.message_id', 'campaign_attempts.attempt_no', 'campaign_attempts.status', 'campaigns.spec'])
      .where('campaign_attempts.status', 'in', activeStatuses)
      .where('campaign_attempts.lease_until', '<', now)
      .limit(limit)
      .execute();
    for (const row of expired) {
      const message = await this.options.db.selectFrom('campaign_messages').selectAll().where('id', '=', row.message_id).executeTakeFirstOrThrow();
      this.options.logger.warn({ messageId: row.message_id, attempt: row.attempt_no, status: row.status }, 'campaign call lease expired: settling the attempt');
      if (row.status === 'answered') await this.outcomes.complete(message, row.attempt_no, 'worker-lost');
      else await this.outcomes.finishUnanswered(message, row.attempt_no, campaignSchema.parse(row.spec), 'failed', undefined, 'worker-lost');
    }
    return expired.length;
  }
}
