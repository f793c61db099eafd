import type { Clock, TimerHandle } from '../../../core/clock.js';

/**
 * A clock whose pending timers can all be cancelled at once: on shutdown the stack's transaction
 * timers (Timer J alone lasts 64*T1 = 32 s) must not keep the process alive after the sockets close.
 */
export class StoppableClock implements Clock {
  private readonly pending = new Set<TimerHandle>();
  private stopped = false;

  constructor(private readonly inner: Clock) {}

  now(): number {
    return this.inner.now();
  }

  setTimeout(callback: () => void, ms: number): TimerHandle {
    const handle = this.inner.setTimeout(() => {
      this.pending.delete(handle);
      callback();
    }, this.stopped ? 0 : ms);
    if (this.stopped) {
      // After stop nothing new may wait: run nothing, keep nothing.
      this.inner.clearTimeout(handle);
      return handle;
    }
    this.pending.add(handle);
    return handle;
  }

  clearTimeout(handle: TimerHandle): void {
    this.pending.delete(handle);
    this.inner.clearTimeout(handle);
  }

  get size(): number {
    return this.pending.size;
  }

  stop(): void {
    this.stopped = true;
    for (const h of this.pending) this.inner.clearTimeout(h);
    this.pending.clear();
  }
}
