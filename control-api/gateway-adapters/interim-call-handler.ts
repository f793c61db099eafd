import type { Logger } from '../../core/logger.js';
import type { ActiveCall, CallHandler } from '../../core/ports/call-handler.js';
import type { CallRecorder } from '../calls/call-recorder.js';

/** About -36 dBFS: above line noise and comfort noise, below quiet speech. */
const SPEECH_RMS = 500;

function rms(samples: Int16Array): number {
  let sum = 0;
  for (const s of samples) sum += s * s;
  return Math.sqrt(sum / Math.max(1, samples.length));
}

/**
 * What an answered inbound call runs until the voice pipeline (issue 7) takes over: the caller's
 * audio is echoed back (so the media path can be checked end to end), audible energy counts as
 * caller speech for end-call-on-silence, DTMF is logged, and the call is recorded in the calls table from answer to hang-up. No recipe runs yet.
 */
export class InterimCallHandler implements CallHandler {
  constructor(
    private readonly recorder: CallRecorder,
    private readonly logger: Logger,
  ) {}

  async handle(call: ActiveCall): Promise<void> {
    const { info } = call;
    let recordId: string | undefined;
    try {
      recordId = await this.recorder.startCall({
        tenantId: info.tenantId,
        direction: 'inbound',
        startedAt: new Date(info.startedAt),
        phoneNumberId: info.numberId,
        phoneNumber: info.dialled,
        remoteNumber: info.caller,
        recipeId: info.recipeId,
        language: info.language,
      });
    } catch (error) {
      this.logger.warn({ err: error, callId: info.id }, 'could not record the call start');
    }
    call.on('dtmf', (e) => this.logger.info({ callId: info.id, digit: e.digit, via: e.via }, 'DTMF received'));
    void call.ended.then(async (end) => {
      if (!recordId) return;
      try {
        await this.recorder.completeCall(recordId, {
          endedAt: new Date(end.endedAt),
          answeredAt: new Date(info.startedAt),
          outcome: 'completed',
          sipStatus: 200,
          endReason: end.reason,
        });
      } catch (error) {
        this.logger.warn({ err: error, callId: info.id }, 'could not record the call end');
      }
    });
    for await (const frame of call.media.input) {
      if (call.signal.aborted) break;
      if (frame.concealed) continue;
      call.media.output.write(frame.samples);
      // Until the voice pipeline's VAD reports speech, audible energy stands in for it, so
      // end-call-on-silence measures the caller's silence rather than the call's age.
      if (rms(frame.samples) > SPEECH_RMS) call.noteCallerSpeech();
    }
  }
}
