import type { PacingScheduler, Tickable } from '../rtp/pacing-scheduler.js';
import type { FrameQueue } from './frame-queue.js';
import type { SessionRecording } from './session-recording.js';

/**
 * What every media session (RTP or a provider's stream) stops the same way when it closes: off the
 * 20 ms clock, the agent audio still queued dropped, the caller-audio readers ended, the recording
 * finished and written.
 */
export async function closeSessionParts(parts: {
  readonly scheduler: PacingScheduler;
  readonly session: Tickable;
  readonly output: { abort(): void };
  readonly input: FrameQueue;
  readonly recording: SessionRecording;
}): Promise<void> {
  parts.scheduler.delete(parts.session);
  parts.output.abort();
  parts.input.end();
  await parts.recording.stop();
}
