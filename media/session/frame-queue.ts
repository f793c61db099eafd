import type { AudioFrame } from '../../core/ports/media.js';

/**
 * The incoming side of a session as an AsyncIterable with a single consumer. Bounded: a consumer
 * that falls behind loses the oldest frames (counted), never the session's memory.
 */
export class FrameQueue implements AsyncIterable<AudioFrame> {
  private frames: AudioFrame[] = [];
  private pending: ((result: IteratorResult<AudioFrame>) => void) | undefined;
  private ended = false;
  private consumed = false;
  dropped = 0;

  constructor(private readonly maxFrames = 50) {}

  /** Whether anyone iterates: the session skips decoding when nobody listens. */
  get active(): boolean {
    return this.consumed && !this.ended;
  }

  push(frame: AudioFrame): void {
    if (this.ended) return;
    const waiter = this.pending;
    if (waiter) {
      this.pending = undefined;
      waiter({ value: frame, done: false });
      return;
    }
    if (this.frames.length >= this.maxFrames) {
      this.frames.shift();
      this.dropped++;
    }
    this.frames.push(frame);
  }

  end(): void {
    this.ended = true;
    this.frames = [];
    const waiter = this.pending;
    this.pending = undefined;
    waiter?.({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterator<AudioFrame> {
    this.consumed = true;
    return {
      next: () => {
        const frame = this.frames.shift();
        if (frame) return Promise.resolve({ value: frame, done: false });
        if (this.ended) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => {
          this.pending = resolve;
        });
      },
      return: () => {
        this.consumed = false;
        this.frames = [];
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
