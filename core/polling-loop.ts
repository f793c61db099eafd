import type { Clock, TimerHandle } from './clock.js';
import type { Logger } from './logger.js';

/**
 * A background loop over a table: run a round, pause, run again; a round that reports more work
 * (a full batch) or a `wake()` during a round runs the next one at once; a failed round is logged
 * and retried after an exponential backoff, so a database outage is not hammered every interval.
 * `stop()` cancels the pause and waits for the round in progress (never for a paused one).
 */
export type RoundResult = 'idle' | 'more';

export interface PollingLoopOptions {
  /** Names the loop in logs. */
  readonly name: string;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Pause after a round that found nothing more to do. */
  readonly intervalMs: number;
  /** One round; resolve 'more' when more work may be waiting now. */
  readonly round: () => Promise<RoundResult | void>;
  /** Failed rounds wait intervalMs * 2^(failures - 1), at most this; default 30 s. */
  readonly maxBackoffMs?: number;
}

export class PollingLoop {
  private timer: TimerHandle | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;
  private woken = false;
  private failures = 0;

  constructor(private readonly options: PollingLoopOptions) {}

  /** Starts with a round right away (on the clock's next turn). */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.failures = 0;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) this.options.clock.clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** Work was added: run a round now, or right after the one in progress. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.woken = true;
      return;
    }
    this.schedule(0);
  }

  get active(): boolean {
    return !this.stopped;
  }

  /** Consecutive failed rounds (0 after a success). */
  get failureCount(): number {
    return this.failures;
  }

  private schedule(ms: number): void {
    if (this.timer) this.options.clock.clearTimeout(this.timer);
    this.timer = this.options.clock.setTimeout(() => {
      this.timer = undefined;
      this.running = this.rounds().finally(() => (this.running = undefined));
    }, ms);
  }

  private async rounds(): Promise<void> {
    for (;;) {
      this.woken = false;
      let more = false;
      let pause = this.options.intervalMs;
      try {
        more = (await this.options.round()) === 'more';
        this.failures = 0;
      } catch (error) {
        this.failures += 1;
        pause = Math.min(this.options.maxBackoffMs ?? 30_000, this.options.intervalMs * 2 ** (this.failures - 1));
        if (!this.stopped) this.options.logger.error({ err: error, loop: this.options.name, failures: this.failures, retryInMs: pause }, `${this.options.name} round failed`);
      }
      if (this.stopped) return;
      if (this.failures === 0 && (more || this.woken)) continue;
      this.schedule(pause);
      return;
    }
  }
}
