import type { AudioSink, PlaybackOutcome } from '../../core/ports/media.js';
import { FRAME_SAMPLES, SAMPLE_RATE } from '../codecs/g711.js';

interface Waiter {
  readonly position: number;
  readonly generation: number;
  readonly resolve: (outcome: PlaybackOutcome) => void;
}

/**
 * The outgoing audio queue behind `MediaSession.output`. Writers append PCM of any length; the
 * media tick takes exactly one 20 ms frame per call. Positions are counted in samples so `play`
 * can resolve when its last sample has gone out, and `clear` (barge-in) bumps a generation that
 * turns every pending play into 'interrupted'.
 */
export class OutputQueue implements AudioSink {
  private chunks: Int16Array[] = [];
  private head = 0;
  private headOffset = 0;
  private queued = 0;
  private written = 0;
  private taken = 0;
  private generation = 0;
  private waiters: Waiter[] = [];
  private drainWaiters: (() => void)[] = [];
  private shortTicks = 0;
  private readonly frame = new Int16Array(FRAME_SAMPLES);
  /** Called when the queue goes from less than a frame to a whole frame (the session may send at once). */
  onFrameReady: (() => void) | undefined;

  constructor(private readonly highWaterSamples = SAMPLE_RATE) {}

  get queuedMs(): number {
    return (this.queued / SAMPLE_RATE) * 1000;
  }

  write(samples: Int16Array): void {
    if (samples.length === 0) return;
    const before = this.queued;
    this.chunks.push(samples);
    this.queued += samples.length;
    this.written += samples.length;
    if (before < FRAME_SAMPLES && this.queued >= FRAME_SAMPLES) this.onFrameReady?.();
  }

  async play(source: AsyncIterable<Int16Array> | Iterable<Int16Array>, signal?: AbortSignal): Promise<PlaybackOutcome> {
    const generation = this.generation;
    if (signal?.aborted) return 'interrupted';
    const onAbort = (): void => this.clear();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      for await (const chunk of source) {
        if (this.generation !== generation || signal?.aborted) return 'interrupted';
        this.write(chunk);
        while (this.queued > this.highWaterSamples && this.generation === generation) {
          await new Promise<void>((resolve) => this.drainWaiters.push(resolve));
        }
      }
      if (this.generation !== generation) return 'interrupted';
      if (this.taken >= this.written) return 'completed';
      return await new Promise<PlaybackOutcome>((resolve) => this.waiters.push({ position: this.written, generation, resolve }));
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  clear(): void {
    this.chunks = [];
    this.head = 0;
    this.headOffset = 0;
    this.taken += this.queued;
    this.queued = 0;
    this.generation++;
    this.shortTicks = 0;
    this.settle();
  }

  /**
   * One frame for this tick, or undefined when idle. The returned array is reused on the next
   * call: encode or copy it before then. A partial frame waits one tick for more data (streamed
   * TTS), then goes out padded with silence.
   */
  take(): Int16Array | undefined {
    if (this.queued === 0) return undefined;
    if (this.queued < FRAME_SAMPLES && this.shortTicks++ === 0) return undefined;
    this.shortTicks = 0;
    const n = Math.min(FRAME_SAMPLES, this.queued);
    let filled = 0;
    while (filled < n) {
      const chunk = this.chunks[this.head];
      if (!chunk) break;
      const count = Math.min(n - filled, chunk.length - this.headOffset);
      this.frame.set(chunk.subarray(this.headOffset, this.headOffset + count), filled);
      filled += count;
      this.headOffset += count;
      if (this.headOffset === chunk.length) {
        this.head++;
        this.headOffset = 0;
      }
    }
    if (filled < FRAME_SAMPLES) this.frame.fill(0, filled);
    if (this.head > 32) {
      this.chunks = this.chunks.slice(this.head);
      this.head = 0;
    }
    this.queued -= filled;
    this.taken += filled;
    this.settle();
    return this.frame;
  }

  /** Ends every pending play (session closed). */
  abort(): void {
    this.clear();
  }

  private settle(): void {
    if (this.waiters.length > 0) {
      const still: Waiter[] = [];
      for (const w of this.waiters) {
        if (w.generation !== this.generation) w.resolve('interrupted');
        else if (this.taken >= w.position) w.resolve('completed');
        else still.push(w);
      }
      this.waiters = still;
    }
    if (this.drainWaiters.length > 0 && this.queued <= this.highWaterSamples / 2) {
      const waiting = this.drainWaiters;
      this.drainWaiters = [];
      for (const resolve of waiting) resolve();
    }
  }
}
