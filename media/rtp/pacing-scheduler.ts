import { performance } from 'node:perf_hooks';

/**
 * One 20 ms clock for every media session in the process (or worker thread). Tick n is due at
 * `start + n * interval` on the monotonic clock, so timer lateness never accumulates into drift;
 * a late wake-up runs the missed ticks back to back (up to `maxCatchUpTicks`) and skips the rest.
 * Sessions derive RTP timestamps from the tick index, so skipped ticks show up as timestamp gaps,
 * as they would on a real sampling clock.
 */
export interface Tickable {
  onTick(tick: number, now: number): void;
}

export interface PacingStats {
  ticks: number;
  /** Ticks that ran more than `lateThresholdMs` after they were due. */
  lateTicks: number;
  skippedTicks: number;
  maxLagMs: number;
  /** Ticks that ran more than 5, 20 (one packet) and 60 ms (a typical jitter buffer) late. */
  lagOver5Ms: number;
  lagOver20Ms: number;
  lagOver60Ms: number;
  /** Time spent inside session tick handlers. */
  busyMs: number;
}

export interface PacingSchedulerOptions {
  readonly intervalMs?: number;
  readonly maxCatchUpTicks?: number;
  /** A tick this far behind its due time counts as late: by default one packet time. */
  readonly lateThresholdMs?: number;
  readonly onError?: (error: unknown) => void;
}

export class PacingScheduler {
  readonly intervalMs: number;
  private readonly maxCatchUpTicks: number;
  private readonly lateThresholdMs: number;
  private readonly members = new Set<Tickable>();
  private timer: NodeJS.Timeout | undefined;
  private startAt = 0;
  private tickIndex = 0;
  private epoch = 0;
  readonly stats: PacingStats = { ticks: 0, lateTicks: 0, skippedTicks: 0, maxLagMs: 0, lagOver5Ms: 0, lagOver20Ms: 0, lagOver60Ms: 0, busyMs: 0 };

  constructor(private readonly options: PacingSchedulerOptions = {}) {
    this.intervalMs = options.intervalMs ?? 20;
    this.maxCatchUpTicks = options.maxCatchUpTicks ?? 3;
    this.lateThresholdMs = options.lateThresholdMs ?? this.intervalMs;
  }

  /** The tick the next `onTick` call will carry (sessions start their timestamp clock from it). */
  get currentTick(): number {
    return this.tickIndex;
  }

  /** When the next tick is due (performance.now() time). */
  get nextDueAt(): number {
    return this.dueAt(this.tickIndex + 1);
  }

  /** When tick `tick` was (or is) due: a member can tell an on-time tick from a catch-up one. */
  dueAt(tick: number): number {
    return this.startAt + tick * this.intervalMs;
  }

  get size(): number {
    return this.members.size;
  }

  add(member: Tickable): void {
    this.members.add(member);
    if (!this.timer) {
      this.startAt = performance.now();
      this.tickIndex = 0;
      this.schedule();
    }
  }

  delete(member: Tickable): void {
    this.members.delete(member);
    if (this.members.size === 0 && this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
      // A wake-up already queued with setImmediate must not start a second chain.
      this.epoch++;
    }
  }

  private schedule(): void {
    const due = this.startAt + (this.tickIndex + 1) * this.intervalMs;
    // Run in the check phase (setImmediate), after the poll phase has read every datagram that
    // arrived by now: after a stall, catch-up ticks then play out packets that were already
    // waiting in the socket instead of declaring them missing.
    const epoch = this.epoch;
    this.timer = setTimeout(() => setImmediate(() => epoch === this.epoch && this.run()), Math.max(0, due - performance.now()));
  }

  private run(): void {
    const now = performance.now();
    let ran = 0;
    while (this.members.size > 0) {
      const due = this.startAt + (this.tickIndex + 1) * this.intervalMs;
      if (due > now) break;
      if (ran === this.maxCatchUpTicks) {
        const behind = Math.floor((now - due) / this.intervalMs) + 1;
        this.tickIndex += behind;
        this.stats.skippedTicks += behind;
        break;
      }
      this.tickIndex++;
      ran++;
      const lag = now - due;
      if (lag > this.stats.maxLagMs) this.stats.maxLagMs = lag;
      if (lag > this.lateThresholdMs) this.stats.lateTicks++;
      if (lag > 5) this.stats.lagOver5Ms++;
      if (lag > 20) this.stats.lagOver20Ms++;
      if (lag > 60) this.stats.lagOver60Ms++;
      this.stats.ticks++;
      this.fire(this.tickIndex, now);
    }
    this.stats.busyMs += performance.now() - now;
    if (this.members.size > 0) this.schedule();
    else this.timer = undefined;
  }

  private fire(tick: number, now: number): void {
    for (const member of this.members) {
      try {
        member.onTick(tick, now);
      } catch (error) {
        this.options.onError?.(error);
      }
    }
  }
}
