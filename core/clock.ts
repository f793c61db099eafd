/** Time as a dependency, so schedulers and SIP timers can be tested without waiting. */
export interface TimerHandle {
  readonly id: number;
}

export interface Clock {
  now(): number;
  setTimeout(callback: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** A Node timer as a TimerHandle: holding it directly costs no lookup table and no wrapper closure. */
class SystemTimer implements TimerHandle {
  constructor(
    readonly id: number,
    readonly timer: NodeJS.Timeout,
  ) {}
}

let nextSystemTimer = 1;

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(callback, ms) {
    return new SystemTimer(nextSystemTimer++, setTimeout(callback, ms));
  },
  clearTimeout(handle) {
    if (handle instanceof SystemTimer) clearTimeout(handle.timer);
  },
};

interface PendingTimer {
  readonly id: number;
  readonly at: number;
  readonly callback: () => void;
}

/** A clock that only moves when told to; timers fire in due order during `advance`. */
export class FakeClock implements Clock {
  private current: number;
  private pending: PendingTimer[] = [];
  private next = 1;

  constructor(start: number | Date = 0) {
    this.current = typeof start === 'number' ? start : start.getTime();
  }

  now(): number {
    return this.current;
  }

  setTimeout(callback: () => void, ms: number): TimerHandle {
    const timer = { id: this.next++, at: this.current + Math.max(0, ms), callback };
    this.pending.push(timer);
    return { id: timer.id };
  }

  clearTimeout(handle: TimerHandle): void {
    this.pending = this.pending.filter((t) => t.id !== handle.id);
  }

  /** Moves time forward, firing every timer that falls due, including ones they schedule. */
  advance(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      const due = this.pending
        .filter((t) => t.at <= target)
        .sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (!due) break;
      this.pending = this.pending.filter((t) => t !== due);
      this.current = due.at;
      due.callback();
    }
    this.current = target;
  }

  setTime(at: number | Date): void {
    const target = typeof at === 'number' ? at : at.getTime();
    if (target < this.current) throw new Error('FakeClock cannot go backwards');
    this.advance(target - this.current);
  }

  get pendingCount(): number {
    return this.pending.length;
  }
}
