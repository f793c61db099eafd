import type { Clock, TimerHandle } from '../../../core/clock.js';

/** RFC 3261 sec. 17.1.1.1 / Table 4 defaults. */
export interface TimerValues {
  /** RTT estimate. */
  readonly T1: number;
  /** Longest retransmit interval for non-INVITE requests and INVITE responses. */
  readonly T2: number;
  /** Longest time a message stays in the network. */
  readonly T4: number;
}

export const DEFAULT_TIMERS: TimerValues = { T1: 500, T2: 4000, T4: 5000 };

/**
 * Named one-shot timers on a Clock, so a transaction can stop all of them when it ends. A
 * transaction runs one or two at a time, so a flat [name, handle, ...] list (made on first use)
 * costs less than a Map per transaction.
 */
export class NamedTimers {
  private handles: Array<string | TimerHandle> | undefined;

  constructor(private readonly clock: Clock) {}

  private indexOf(name: string): number {
    const h = this.handles;
    if (h) for (let i = 0; i < h.length; i += 2) if (h[i] === name) return i;
    return -1;
  }

  start(name: string, ms: number, fire: () => void): void {
    this.stop(name);
    const handle = this.clock.setTimeout(() => {
      this.forget(name, handle);
      fire();
    }, ms);
    (this.handles ??= []).push(name, handle);
  }

  private forget(name: string, handle: TimerHandle): void {
    const i = this.indexOf(name);
    if (i >= 0 && this.handles?.[i + 1] === handle) this.handles.splice(i, 2);
  }

  stop(name: string): void {
    const i = this.indexOf(name);
    if (i < 0 || !this.handles) return;
    this.clock.clearTimeout(this.handles[i + 1] as TimerHandle);
    this.handles.splice(i, 2);
  }

  stopAll(): void {
    const h = this.handles;
    if (!h) return;
    this.handles = undefined;
    for (let i = 1; i < h.length; i += 2) this.clock.clearTimeout(h[i] as TimerHandle);
  }

  isRunning(name: string): boolean {
    return this.indexOf(name) >= 0;
  }
}
