import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { errorMessage } from '../../../core/errors.js';
import type { Logger } from '../../../core/logger.js';
import type { ActiveCall } from '../../../core/ports/call-handler.js';

/** Stops the recording and hands it to the shared store; a failed copy leaves it in the local directory. */
export async function finishCallRecording(call: ActiveCall, ref: string, keep: ((ref: string) => Promise<void>) | undefined, log: Logger): Promise<void> {
  try {
    await call.media.stopRecording();
  } catch (error) {
    log.warn({ err: errorMessage(error) }, 'could not stop the recording');
    return;
  }
  try {
    await keep?.(ref);
  } catch (error) {
    log.warn({ err: errorMessage(error), ref }, 'could not copy the recording to the shared store: only this node serves it');
  }
}

/** Starts the stereo recording under `<recordingsDir>/<yyyy-mm-dd>/<call>.wav`; returns its ref. */
export async function startCallRecording(call: ActiveCall, dir: string | undefined, recordId: string | undefined, log: Logger): Promise<string | undefined> {
  if (!dir) return undefined;
  const ref = path.join(new Date(call.info.startedAt).toISOString().slice(0, 10), `${recordId ?? call.info.id}.wav`);
  try {
    await mkdir(path.join(dir, path.dirname(ref)), { recursive: true });
    await call.media.startRecording(path.join(dir, ref));
    return ref;
  } catch (error) {
    // A call without a recording still runs: the caller should not pay for a full disk.
    log.warn({ err: errorMessage(error) }, 'could not start the call recording');
    return undefined;
  }
}
