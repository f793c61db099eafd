import { performance } from 'node:perf_hooks';

/**
 * How late this process's event loop runs: a timer every `intervalMs` notes how long after its due
 * time it fired, and `lagMs()` is the mean delay an event arriving at a random moment of the last
 * `windowMs` met before the loop could run it. A timer late by L was held up by a stretch of about
 * L of busy loop; an event arriving during such a stretch waits L/2 on average, and the stretch is
 * L/W of the window, so the mean is the sum of L squared over 2W. Weighting by time, not by sample,
 * matters: a loop blocked for a whole second yields one late sample against fifty punctual ones
 * the second after, and a mean per sample would call that loop idle. Everything a call needs in
 * time (RTP pacing every 20 ms, SIP retransmissions, reading the SIP socket, the recogniser's
 * audio) runs on this loop, so this is the calls' own measure of the node's load, whatever else
 * shares the machine. The timer is unref'd: it never keeps the process alive.
 */
export class LoopLagMonitor {
  private readonly at: number[] = [];
  private readonly squares: number[] = [];
  private head = 0;
  private sum = 0;
  private due = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly intervalMs = 20,
    private readonly windowMs = 1000,
  ) {}

  start(): this {
    if (this.timer) return this;
    this.due = performance.now() + this.intervalMs;
    this.timer = setTimeout(this.tick, this.intervalMs);
    this.timer.unref();
    return this;
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Mean delay over the last window, in milliseconds (0 before the first sample). */
  lagMs(): number {
    this.evict(performance.now());
    return this.sum / (2 * this.windowMs);
  }

  private readonly tick = (): void => {
    const now = performance.now();
    const lag = Math.max(0, now - this.due);
    this.at.push(now);
    this.squares.push(lag * lag);
    this.sum += lag * lag;
    this.evict(now);
    this.due = now + this.intervalMs;
    this.timer = setTimeout(this.tick, this.intervalMs);
    this.timer.unref();
  };

  private evict(now: number): void {
    while (this.head < this.at.length && (this.at[this.head] as number) < now - this.windowMs) {
      this.sum -= this.squares[this.head] as number;
      this.head++;
    }
    if (this.head > 256) {
      this.at.splice(0, this.head);
      this.squares.splice(0, this.head);
      this.head = 0;
    }
    // Floating-point drift of the running sum must not leave a tiny negative mean.
    if (this.head === this.squares.length) this.sum = 0;
  }
}
