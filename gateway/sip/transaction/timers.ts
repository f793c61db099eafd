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

/** Named one-shot timers on a Clock, so a transaction can stop all of them when it ends. */
export class NamedTimers {
  private readonly handles = new Map<string, TimerHandle>();

  constructor(private readonly clock: Clock) {}

  start(name: string, ms: number, fire: () => void): void {
    this.stop(name);
    const handle = this.clock.setTimeout(() => {
      this.handles.delete(name);
      fire();
    }, ms);
    this.handles.set(name, handle);
  }

  stop(name: string): void {
    const h = this.handles.get(name);
    if (h) this.clock.clearTimeout(h);
    this.handles.delete(name);
  }

  stopAll(): void {
    for (const h of this.handles.values()) this.clock.clearTimeout(h);
    this.handles.clear();
  }

  isRunning(name: string): boolean {
    return this.handles.has(name);
  }
}
