import type { Kysely } from 'kysely';
import type { Clock, TimerHandle } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import type { Database } from '../store/schema.js';
import type { CampaignScheduler } from './campaign-scheduler.js';

/**
 * Store poller: runs every message whose `next_attempt_at` has passed and settles attempts whose
 * lease expired. On PGlite it is the only trigger (Agenda cannot reach PGlite, see
 * docs/scheduler.md); next to Agenda on PostgreSQL it reconciles, with a grace period, any
 * message whose job was lost (e.g. the process died between storing the message and the job).
 */
export interface DuePollerOptions {
  readonly db: Kysely<Database>;
  readonly scheduler: CampaignScheduler;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Default 500 ms (PGlite) - keep it <= 1 s where the poller is the trigger. */
  readonly pollMs?: number;
  /** Only pick messages overdue by this much (0 when the poller is the trigger). */
  readonly graceMs?: number;
  readonly batchSize?: number;
  /** Messages run at once per round. */
  readonly parallelism?: number;
}

export class DuePoller {
  private timer: TimerHandle | undefined;
  private round: Promise<void> | undefined;
  private stopped = true;

  constructor(private readonly options: DuePollerOptions) {}

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) this.options.clock.clearTimeout(this.timer);
    await this.round;
  }

  private schedule(ms: number): void {
    this.timer = this.options.clock.setTimeout(() => {
      this.timer = undefined;
      this.round = this.runOnce()
        .then(() => undefined)
        .catch((error: unknown) => this.options.logger.error({ err: error }, 'campaign poller round failed'))
        .finally(() => {
          this.round = undefined;
          if (!this.stopped) this.schedule(this.options.pollMs ?? 500);
        });
    }, ms);
  }

  /** One pass: recover expired leases, then run every due message (in batches). Returns how many ran. */
  async runOnce(): Promise<number> {
    const { db, scheduler, clock } = this.options;
    await scheduler.recoverExpired();
    let ran = 0;
    for (;;) {
      const cutoff = new Date(clock.now() - (this.options.graceMs ?? 0));
      const due = await db
        .selectFrom('campaign_messages')
        .select('id')
        .where('status', '=', 'scheduled')
        .where('next_attempt_at', '<=', cutoff)
        .orderBy('next_attempt_at')
        .limit(this.options.batchSize ?? 200)
        .execute();
      if (due.length === 0) return ran;
      const ids = due.map((d) => d.id);
      const parallel = this.options.parallelism ?? 16;
      let progressed = 0;
      for (let i = 0; i < ids.length; i += parallel) {
        const results = await Promise.all(ids.slice(i, i + parallel).map((id) => scheduler.runMessage(id)));
        progressed += results.filter((r) => r === 'dialing' || r === 'discarded' || r === 'rescheduled').length;
      }
      ran += ids.length;
      // Everything left is queued behind a limit or locked by another worker: wait for the next poll.
      if (progressed === 0 || this.stopped) return ran;
    }
  }
}
