/**
 * How long the receive side waits for a packet that has not arrived yet, from what the network
 * actually does instead of a fixed depth.
 *
 * - Interarrival jitter J as in RFC 3550 sec. 6.4.1 / A.8: for consecutive arrivals i, j,
 *   D = (Rj - Ri) - (Sj - Si) with S the RTP timestamp in ms, and J += (|D| - J) / 16.
 * - Target = 3 J + a late allowance, never below `floorMs` nor above `maxMs`. Three times the
 *   mean deviation covers nearly every packet of a jittery but steady stream.
 * - Grow on late packets: a packet that arrives after its slot was concealed adds one packet
 *   time (20 ms) to the allowance at once, so a burst of lateness is absorbed quickly.
 * - Shrink during silence: the allowance decays only while the caller is silent (1 ms per 20 ms
 *   of silence), so the wait never drops in the middle of speech, where a cut would be heard
 *   and would break a word in the recogniser.
 * - Until `warmupPackets` have been measured the configured initial wait applies (the estimate
 *   needs a few samples; a call's first reordered packets must not be declared lost).
 */
export interface AdaptiveDelayOptions {
  /** Wait used before the estimate has settled (ms). */
  readonly initialMs?: number;
  /**
   * The smallest wait (ms), default one packet time: loopback and LAN jitter is near zero, but a
   * busy sender's timer is not. It costs nothing while packets flow in order (they play at once).
   */
  readonly floorMs?: number;
  /** The largest wait (ms): bounds the delay a very bad line can add. */
  readonly maxMs?: number;
  readonly warmupPackets?: number;
  /** RTP clock rate (Hz). */
  readonly clockRate?: number;
}

export class AdaptiveDelay {
  private readonly initialMs: number;
  private readonly floorMs: number;
  private readonly maxMs: number;
  private readonly warmup: number;
  private readonly msPerTick: number;
  private jitter = 0;
  private allowance = 0;
  private measured = 0;
  private lastTransit = NaN;
  /** Late packets seen (grew the wait). */
  lateGrowths = 0;

  constructor(options: AdaptiveDelayOptions = {}) {
    this.floorMs = options.floorMs ?? 20;
    this.maxMs = Math.max(this.floorMs, options.maxMs ?? 200);
    this.initialMs = Math.min(this.maxMs, Math.max(this.floorMs, options.initialMs ?? 60));
    this.warmup = options.warmupPackets ?? 50;
    this.msPerTick = 1000 / (options.clockRate ?? 8000);
  }

  /** RFC 3550 interarrival jitter estimate, in ms. */
  get jitterMs(): number {
    return this.jitter;
  }

  /** How long to wait for a missing packet now (ms). */
  get targetMs(): number {
    if (this.measured < this.warmup) return Math.max(this.initialMs, this.allowance);
    return Math.min(this.maxMs, Math.max(this.floorMs, 3 * this.jitter + this.allowance));
  }

  /** A packet arrived at `arrivalMs` (monotonic) carrying RTP timestamp `rtpTimestamp`. */
  onArrival(arrivalMs: number, rtpTimestamp: number): void {
    // Transit time up to a constant offset; the difference of two transits is D (sec. 6.4.1).
    // Timestamps are unsigned 32-bit: work modulo 2^32 so a wrap is not a jump.
    const transit = arrivalMs - (rtpTimestamp >>> 0) * this.msPerTick;
    if (!Number.isNaN(this.lastTransit)) {
      let d = transit - this.lastTransit;
      const wrapMs = 2 ** 32 * this.msPerTick;
      if (d > wrapMs / 2) d -= wrapMs;
      else if (d < -wrapMs / 2) d += wrapMs;
      this.jitter += (Math.abs(d) - this.jitter) / 16;
      this.measured++;
    }
    this.lastTransit = transit;
  }

  /** A new stream (source switch, resynchronisation): the old transit base means nothing. */
  restart(): void {
    this.lastTransit = NaN;
  }

  /** A packet came after its slot had been concealed: wait one packet time longer from now on. */
  onLate(): void {
    this.lateGrowths++;
    this.allowance = Math.min(this.maxMs, this.allowance + 20);
  }

  /** `ms` of caller silence went by: let the allowance decay. */
  onSilence(ms: number): void {
    if (this.allowance > 0) this.allowance = Math.max(0, this.allowance - ms / 20);
  }
}
