import type { AudioFrame } from '../../core/ports/media.js';

/** One reader's queue: bounded, so a reader that falls behind loses its oldest frames. */
class Subscription implements AsyncIterator<AudioFrame> {
  private frames: AudioFrame[] = [];
  private pending: ((result: IteratorResult<AudioFrame>) => void) | undefined;
  private closed = false;

  constructor(
    private readonly owner: FrameQueue,
    private readonly maxFrames: number,
  ) {}

  push(frame: AudioFrame): void {
    const waiter = this.pending;
    if (waiter) {
      this.pending = undefined;
      waiter({ value: frame, done: false });
      return;
    }
    if (this.frames.length >= this.maxFrames) {
      this.frames.shift();
      this.owner.dropped++;
    }
    this.frames.push(frame);
  }

  /** Ends the reader: a pending `next` resolves done. */
  close(): void {
    this.closed = true;
    this.frames = [];
    const waiter = this.pending;
    this.pending = undefined;
    waiter?.({ value: undefined, done: true });
  }

  next(): Promise<IteratorResult<AudioFrame>> {
    const frame = this.frames.shift();
    if (frame) return Promise.resolve({ value: frame, done: false });
    if (this.closed) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => {
      this.pending = resolve;
    });
  }

  return(): Promise<IteratorResult<AudioFrame>> {
    this.owner.unsubscribe(this);
    this.close();
    return Promise.resolve({ value: undefined, done: true });
  }
}

/**
 * The incoming side of a session as an AsyncIterable. Every `for await` (every iterator) is its
 * own reader with its own bounded queue and gets every frame from the moment it starts: the
 * conversation's ear and a bridge's relay can read the same call without taking frames from
 * each other. Frames are shared between readers: treat them as read-only.
 */
export class FrameQueue implements AsyncIterable<AudioFrame> {
  private readonly readers = new Set<Subscription>();
  private ended = false;
  /** Frames dropped from readers that fell behind, all readers together. */
  dropped = 0;

  constructor(private readonly maxFrames = 50) {}

  /** Whether anyone reads: the session allocates no frames when nobody listens. */
  get active(): boolean {
    return this.readers.size > 0;
  }

  get readerCount(): number {
    return this.readers.size;
  }

  push(frame: AudioFrame): void {
    for (const reader of this.readers) reader.push(frame);
  }

  end(): void {
    this.ended = true;
    for (const reader of this.readers) reader.close();
    this.readers.clear();
  }

  unsubscribe(reader: Subscription): void {
    this.readers.delete(reader);
  }

  [Symbol.asyncIterator](): AsyncIterator<AudioFrame> {
    const reader = new Subscription(this, this.maxFrames);
    if (this.ended) reader.close();
    else this.readers.add(reader);
    return reader;
  }
}
