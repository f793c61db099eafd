import type { Clock } from '../../../core/clock.js';
import type { Logger } from '../../../core/logger.js';
import { PollingLoop } from '../../../core/polling-loop.js';
import type { CampaignScheduler } from './campaign-scheduler.js';

/**
 * Store poller: runs every message whose `next_attempt_at` has passed and settles attempts whose
 * lease expired. On PGlite it is the only trigger (Agenda cannot reach PGlite, see
 * docs/scheduler.md); next to Agenda on PostgreSQL it reconciles, with a grace period, any
 * message whose job was lost (e.g. the process died between storing the message and the job).
 */
export interface DuePollerOptions {
  readonly scheduler: CampaignScheduler;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Default 500 ms (PGlite) - keep it <= 1 s where the poller is the trigger. */
  readonly pollMs?: number;
  /** Only pick messages overdue by this much (0 when the poller is the trigger). */
  readonly graceMs?: number;
  readonly batchSize?: number;
  /** Claiming sweeps run at once per round. */
  readonly parallelism?: number;
}

export class DuePoller {
  private readonly loop: PollingLoop;
  private stopping = false;

  constructor(private readonly options: DuePollerOptions) {
    this.loop = new PollingLoop({
      name: 'campaign poller',
      clock: options.clock,
      logger: options.logger,
      intervalMs: options.pollMs ?? 500,
      round: async () => void (await this.runOnce()),
    });
  }

  start(): void {
    this.stopping = false;
    this.loop.start();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.loop.stop();
  }

  /** One pass: recover expired leases, then claim every due message in batches. Returns how many were decided. */
  async runOnce(): Promise<number> {
    const { scheduler } = this.options;
    await scheduler.recoverExpired();
    const batch = this.options.batchSize ?? 200;
    const sweep = async (): Promise<number> => {
      let ran = 0;
      for (;;) {
        const { decided: n, dispatched } = await scheduler.claimDueBatch(batch, this.options.graceMs ?? 0);
        ran += n;
        // Messages queued behind a limit come back 1 s later, so a short batch means "done for now".
        if (n < batch || this.stopping) return ran;
        // The next batch once this one's INVITEs are out (see claimDueBatch).
        await dispatched;
      }
    };
    // Concurrent sweeps take disjoint rows (SKIP LOCKED) and overlap their commits.
    const counts = await Promise.all(Array.from({ length: this.options.parallelism ?? 2 }, sweep));
    return counts.reduce((a, b) => a + b, 0);
  }
}
