import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { Clock, TimerHandle } from '../../../core/clock.js';
import type { Logger } from '../../../core/logger.js';
import { counter } from '../../../core/metrics.js';
import type { Originator } from '../../../core/ports/originator.js';
import type { CampaignMessagesTable, Database } from '../../platform/store/schema.js';
import { enqueueCallback, type MessageForCallback } from './callbacks.js';
import { AttemptDialer, type Claim } from './attempt-dialer.js';
import { AttemptOutcomes } from './attempt-outcomes.js';
import { recoverExpiredAttempts } from './lease-recovery.js';
import { nextOpening } from './working-window.js';
import { belowLimits, campaignContext, type CampaignContext } from './claim-context.js';

/**
 * Places campaign calls. A job (Agenda or the store poller) calls `runMessage(id)` when a message
 * may be due; everything else is decided here under a row lock on the message, so the decision
 * is the same however many times and on however many workers the job fires:
 *  - not due / not scheduled: nothing happens;
 *  - outside the working window: reschedule to the next opening or discard (campaign DND setting);
 *  - at a concurrency limit: stay queued and look again shortly;
 *  - otherwise claim the attempt by inserting the (message_id, attempt_no) row, commit, then dial
 *    (attempt-dialer.ts: `dialing` is committed right before the INVITE leaves).
 * An attempt row carries a lease the dialing worker renews; an expired lease means the worker
 * died mid-attempt and `recoverExpired` settles it (lease-recovery.ts): never dialled, it is
 * handed back to the queue; dialled, it is never placed again.
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
  /** Unanswered outcomes (and ringing / answered steps) settled per transaction at most; default 500. */
  readonly outcomeBatchSize?: number;
  /** Called after callbacks were queued, to wake the delivery loop. */
  readonly onCallbacksQueued?: () => void;
}

type MessageRow = Selectable<CampaignMessagesTable>;

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

const forCallback = (m: MessageRow): MessageForCallback => m;

export class CampaignScheduler {
  private heartbeat: TimerHandle | undefined;
  private readonly outcomes: AttemptOutcomes;
  private readonly dialer: AttemptDialer;
  private stopping = false;

  constructor(private readonly options: CampaignSchedulerOptions) {
    this.outcomes = new AttemptOutcomes({
      db: options.db,
      clock: options.clock,
      onCallbacksQueued: () => options.onCallbacksQueued?.(),
      enqueue: (id, at) => this.enqueue(id, at),
    });
    this.dialer = new AttemptDialer({
      db: options.db,
      originator: options.originator,
      clock: options.clock,
      logger: options.logger,
      workerId: options.workerId,
      leaseMs: this.leaseMs,
      outcomes: this.outcomes,
      outcomeBatchSize: options.outcomeBatchSize ?? 500,
      // Outcome transactions of a burst of calls must not take every pooled connection: claiming the
      // next calls is what keeps them on time.
      bookkeepingConcurrency: options.bookkeepingConcurrency ?? 4,
      onCallbacksQueued: () => options.onCallbacksQueued?.(),
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
    if (!(await this.dialer.waitFor(graceMs))) await this.dialer.abortAll(new Error('worker stopping'));
  }

  /** Resolves when every call this worker placed has been settled in the store. */
  async settled(): Promise<void> {
    await this.dialer.settled();
  }

  get activeCalls(): number {
    return this.dialer.activeCalls;
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
    return (await this.claimDueBatch(limit, graceMs)).decided;
  }

  /**
   * `runDueBatch`, also giving when the batch's calls have sent their INVITEs (or ended without
   * one), at most `dispatchWaitMs` later. Claiming sweeps wait for it before the next batch:
   * calls are claimed as fast as they are dialled, not faster, and on PGlite a claim (which
   * holds the event loop while it runs) does not delay INVITEs that are ready to go.
   */
  async claimDueBatch(limit = 200, graceMs = 0, dispatchWaitMs = 5_000): Promise<{ decided: number; dispatched: Promise<void> }> {
    if (this.stopping) return { decided: 0, dispatched: Promise.resolve() };
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
    const { dispatched } = await this.afterCommit(followUps, now);
    let timer: NodeJS.Timeout | undefined;
    const bounded = Promise.race([dispatched, new Promise<void>((resolve) => (timer = setTimeout(resolve, dispatchWaitMs)))]).finally(() => clearTimeout(timer));
    return { decided, dispatched: bounded };
  }

  /** Starts the claimed calls and queues the follow-ups; `dispatched`: when the calls' INVITEs are out. */
  private async afterCommit(followUps: readonly FollowUp[], now: number): Promise<{ dispatched: Promise<void> }> {
    if (followUps.some((f) => f.callbacks)) this.options.onCallbacksQueued?.();
    const started: Array<Promise<void>> = [];
    for (const followUp of followUps) {
      if (followUp.result) runs.inc({ result: followUp.result });
      if (followUp.claim) started.push(this.dialer.start(followUp.claim, now));
    }
    await Promise.all(followUps.filter((f) => f.enqueueAt !== undefined).map((f) => this.enqueue(f.messageId, f.enqueueAt!)));
    // Wrapped: an async function returning a promise would wait for it.
    return { dispatched: Promise.all(started).then(() => undefined) };
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
        status: 'claimed',
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
            status: 'claimed',
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
    await this.dialer.renewLeases(new Date(this.options.clock.now() + this.leaseMs));
  }

  /**
   * Settles attempts whose worker stopped renewing the lease (crashed or was cut off), see
   * lease-recovery.ts. Returns how many were settled or handed back.
   */
  async recoverExpired(limit = 500): Promise<number> {
    return recoverExpiredAttempts({ db: this.options.db, clock: this.options.clock, logger: this.options.logger, outcomes: this.outcomes }, limit);
  }
}
