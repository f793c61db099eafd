import type { Clock, TimerHandle } from './clock.js';

/** What a lane expires: an object with one method, so a timer costs no closure. */
export interface LaneEntry {
  expire(): void;
}

/** Entry slots are recycled in blocks; below this many spent slots compaction is not worth it. */
const COMPACT_AT = 1024;

/**
 * Many one-shot timers of one duration on a Clock, driven by a single clock timer. All entries
 * wait the same time and the clock only moves forward, so they fall due in the order they were
 * added and a FIFO replaces a timer each: `add` and `cancel` are O(1) and allocate only array
 * slots, and nothing is kept per entry beyond the entry itself. Built for protocol wait timers
 * held by thousands of objects at once (SIP Timers J and L wait 32 s for every call).
 *
 * With `slackMs`, the clock timer is armed that much after the head's deadline, so entries
 * falling due close together expire in one wake-up: never early, at most `slackMs` late.
 * A clock set backwards cannot stall a lane: an entry whose deadline lies more than `ms` ahead
 * is treated as due.
 */
export class TimerLane {
  private entries: Array<LaneEntry | undefined> = [];
  private deadlines: number[] = [];
  /** Index of the first slot not yet expired or skipped. */
  private head = 0;
  /** Ticket of slot 0: tickets stay valid across compaction. */
  private base = 0;
  private armed: TimerHandle | undefined;
  private firing = false;
  private pending = 0;

  constructor(
    private readonly clock: Clock,
    readonly ms: number,
    readonly slackMs = 0,
  ) {}

  /** Entries waiting (cancelled ones excluded). */
  get size(): number {
    return this.pending;
  }

  /** Expires `entry` in `ms`; returns the ticket that cancels it. */
  add(entry: LaneEntry): number {
    const deadline = this.clock.now() + this.ms;
    this.entries.push(entry);
    this.deadlines.push(deadline);
    this.pending++;
    if (this.armed === undefined && !this.firing) this.arm(deadline);
    return this.base + this.entries.length - 1;
  }

  /** Cancels a pending entry; unknown, expired or already cancelled tickets are ignored. */
  cancel(ticket: number): void {
    const i = ticket - this.base;
    if (i < this.head || i >= this.entries.length || this.entries[i] === undefined) return;
    this.entries[i] = undefined;
    this.pending--;
  }

  private arm(deadline: number): void {
    const wait = Math.min(this.ms, Math.max(0, deadline - this.clock.now()));
    this.armed = this.clock.setTimeout(this.fire, wait + this.slackMs);
  }

  private readonly fire = (): void => {
    this.armed = undefined;
    this.firing = true;
    const now = this.clock.now();
    try {
      while (this.head < this.entries.length) {
        const entry = this.entries[this.head];
        const deadline = this.deadlines[this.head] ?? now;
        // Cancelled slots are skipped whatever their deadline; live ones wait until due.
        if (entry !== undefined && deadline > now && deadline - now <= this.ms) break;
        this.entries[this.head] = undefined;
        this.head++;
        if (entry !== undefined) {
          this.pending--;
          entry.expire();
        }
      }
    } finally {
      this.firing = false;
      this.compact();
      const next = this.deadlines[this.head];
      if (next !== undefined && this.armed === undefined) this.arm(next);
    }
  };

  private compact(): void {
    if (this.head === this.entries.length) {
      this.base += this.head;
      this.head = 0;
      this.entries.length = 0;
      this.deadlines.length = 0;
    } else if (this.head >= COMPACT_AT && this.head * 2 >= this.entries.length) {
      this.base += this.head;
      this.entries = this.entries.slice(this.head);
      this.deadlines = this.deadlines.slice(this.head);
      this.head = 0;
    }
  }
}

const lanesByClock = new WeakMap<Clock, Map<number, Map<number, TimerLane>>>();

/**
 * The shared lane of a clock for one duration and slack: every user of the same clock and
 * duration shares one clock timer. Durations come from protocol constants, so the number of
 * lanes per clock stays small. Callers on a hot path keep the lane rather than look it up.
 */
export function timerLane(clock: Clock, ms: number, slackMs = 0): TimerLane {
  let byMs = lanesByClock.get(clock);
  if (!byMs) {
    byMs = new Map();
    lanesByClock.set(clock, byMs);
  }
  let bySlack = byMs.get(ms);
  if (!bySlack) {
    bySlack = new Map();
    byMs.set(ms, bySlack);
  }
  let lane = bySlack.get(slackMs);
  if (!lane) {
    lane = new TimerLane(clock, ms, slackMs);
    bySlack.set(slackMs, lane);
  }
  return lane;
}
