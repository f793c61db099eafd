import { FRAME_MS } from '../codecs/g711.js';
import { OutputQueue } from '../session/output-queue.js';

/**
 * The agent's outgoing audio on a provider media stream. Frames leave our queue ahead of time and
 * wait in the provider's own playout buffer, so what the caller has not heard yet is our queue
 * plus that buffer: `queuedMs` counts both (the Speaker reads it at barge-in to know which words
 * were never heard), and `clear()` empties both (the provider is told to drop its buffer).
 */
export class StreamOutput extends OutputQueue {
  /** Audio sent to the provider that it has not played yet, by our estimate (ms). */
  remoteMs = 0;
  /** Called by `clear()` so the provider drops what it buffered (barge-in). */
  onClear: (() => void) | undefined;

  override get queuedMs(): number {
    return super.queuedMs + this.remoteMs;
  }

  /** Audio waiting in our own queue, not yet sent (ms). */
  get localMs(): number {
    return super.queuedMs;
  }

  /** Whole frames waiting in our own queue. */
  get localFrames(): number {
    return Math.floor(super.queuedMs / FRAME_MS);
  }

  override clear(): void {
    super.clear();
    this.remoteMs = 0;
    // `play()` aborted by its signal and `abort()` on close come through here too; the session's
    // onClear decides whether a provider is still connected to tell.
    this.onClear?.();
  }
}
