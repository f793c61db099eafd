import type { AudioFrame } from '../../core/ports/media.js';

/** 15 s of 20 ms frames: more than any call setup takes, small beside a call (about 240 KB). */
const DEFAULT_MAX_FRAMES = 750;

/**
 * The caller's audio from the moment the call is answered, kept until the conversation listens.
 * A session's `input` gives a reader only the frames that arrive after it starts reading, and a
 * call handler first loads the recipe, the number and the speech settings: a callee who says
 * "Hello?" at once, or talks over the first words, would be lost to the ear and to the
 * answering-machine detector while that runs (on a loaded node, seconds). Reading starts here,
 * at answer; `reader()` hands every frame kept so far, then the live ones, to one consumer.
 * Bounded: past `maxFrames` the oldest go.
 */
export class EarlyAudio {
  private readonly frames: AudioFrame[] = [];
  private readonly source: AsyncIterator<AudioFrame>;
  private handedOver = false;
  private ended = false;
  private wake: (() => void) | undefined;
  /** Why the session's input failed, passed on to the reader once it has read what came before. */
  private failure: unknown;
  /** Frames dropped because nobody read them in time. */
  dropped = 0;

  constructor(
    input: AsyncIterable<AudioFrame>,
    private readonly maxFrames = DEFAULT_MAX_FRAMES,
  ) {
    this.source = input[Symbol.asyncIterator]();
    void this.pump();
  }

  /** The one reader of this audio: what was kept since answer first, then the live frames. */
  reader(): AsyncIterator<AudioFrame> {
    if (this.handedOver) throw new Error('early audio has one reader');
    this.handedOver = true;
    return {
      next: async (): Promise<IteratorResult<AudioFrame>> => {
        for (;;) {
          const frame = this.frames.shift();
          if (frame) return { value: frame, done: false };
          if (this.failure !== undefined) throw this.failure;
          if (this.ended) return { value: undefined, done: true };
          await new Promise<void>((resolve) => (this.wake = resolve));
          this.wake = undefined;
        }
      },
      return: (): Promise<IteratorResult<AudioFrame>> => {
        this.stop();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }

  /** Stops reading the call (the call ended, or no conversation will listen). */
  stop(): void {
    if (this.ended) return;
    this.ended = true;
    this.frames.length = 0;
    void this.source.return?.();
    this.wake?.();
  }

  private async pump(): Promise<void> {
    try {
      for (let next = await this.source.next(); !next.done && !this.ended; next = await this.source.next()) {
        if (this.frames.length >= this.maxFrames) {
          this.frames.shift();
          this.dropped++;
        }
        this.frames.push(next.value);
        this.wake?.();
      }
    } catch (error) {
      this.failure = error ?? new Error('caller audio failed');
    } finally {
      // The session's input ended (hang-up): the reader gets what is left, then done.
      this.ended = true;
      this.wake?.();
    }
  }
}
