import type { Kysely } from 'kysely';
import { errorMessage } from '../../../core/errors.js';
import type { Logger } from '../../../core/logger.js';
import type { ActiveCall, CallHandler } from '../../../core/ports/call-handler.js';
import type { OriginateRequest } from '../../../core/ports/originator.js';
import type { CallRecorder } from '../calls/call-recorder.js';
import { isUuid } from '../calls/call-repository.js';
import type { Database } from '../../platform/store/schema.js';
import type { TenantCallSpeech } from '../../model/tenants/tenant-speech.js';
import { callEndOf } from './call-end-record.js';
import { finishCallRecording, startCallRecording } from './call-recording.js';
import { callDirection, runRecipeOnCall, type CallState, type RecipeRunDeps } from './recipe-call-run.js';
import { loadCallSetup } from './call-setup.js';
import { EarlyAudio } from '../../../media/voice/early-audio.js';
import { callSpeech, recipeListens, sayUnsupportedLanguage } from './call-speech.js';

/** The run's needs (services, transfer, turn-taking overrides) and the call's store and recording. */
export interface RecipeCallHandlerOptions extends RecipeRunDeps {
  readonly db: Kysely<Database>;
  readonly recorder: CallRecorder;
  readonly logger: Logger;
  /** Where call recordings are written (`<dataDir>/recordings`); none: calls are not recorded. */
  readonly recordingsDir?: string;
  /** Gets each finished recording's ref before the call record names it (shared store, calls/recordings.ts). */
  readonly keepRecording?: (ref: string) => Promise<void>;
  /** The tenant's speech settings, read per call (tenant-speech.ts); none: offline speech (espeak-ng, pocketsphinx). */
  readonly speech?: (tenantId: string) => Promise<TenantCallSpeech>;
}

/** How long hang-up may take to settle before the record is written anyway. */
const END_SETTLE_MS = 5_000;

/**
 * Runs the number's recipe on an answered call: builds the PhoneConversation from the number's
 * speech settings and the recipe's turn-taking settings, runs the RecipeRun on the call's signal,
 * records the call from answer to hang-up (which queues post-call analysis), and hangs up when the
 * recipe ends. Every task hangs off `call.signal`, so nothing outlives the call.
 */
export class RecipeCallHandler implements CallHandler {
  constructor(private readonly o: RecipeCallHandlerOptions) {}

  /**
   * `outbound` is the campaign's dial request when the call is one we placed (SipOriginator's
   * onAnswered): then `info.caller` is our number and `info.dialled` the callee.
   */
  async handle(call: ActiveCall, outbound?: OriginateRequest): Promise<void> {
    // First of all: what the callee says while the call is being set up is heard too.
    const early = new EarlyAudio(call.media.input);
    const { info } = call;
    const log = this.o.logger.child({ callId: info.id, sipCallId: info.sipCallId, tenantId: info.tenantId });
    const answeredAt = new Date(info.startedAt);
    const recordId = await this.recordStart(call, outbound, answeredAt, log);
    call.on('dtmf', (e) => log.debug({ digit: e.digit, via: e.via }, 'DTMF received'));
    const state: CallState = { sttLost: false, stopRecipe: new AbortController(), transfers: [], early };
    const { recordingRef, failure } = await this.run(call, outbound, recordId, log, state);
    const end = await settled(call, END_SETTLE_MS);
    if (!recordId) return;
    const { run, result, voicemail, speechEnd, answeringMachine, transfers } = state;
    try {
      const ended = callEndOf({
        answeredAt,
        endedAt: new Date(end?.endedAt ?? Date.now()),
        end,
        ...(run ? { run } : {}),
        ...(result ? { result } : {}),
        ...(speechEnd ? { speechEnd } : {}),
        ...(voicemail ? { voicemail } : {}),
        ...(answeringMachine ? { answeringMachine } : {}),
        failed: failure !== undefined,
        ...(recordingRef ? { recordingRef } : {}),
        transfers,
      });
      await this.o.recorder.completeCall(recordId, ended);
    } catch (error) {
      log.warn({ err: errorMessage(error) }, 'could not record the call end');
    }
  }

  /** The call's record, opened as it is answered; undefined when the store refused it (the call goes on). */
  private async recordStart(call: ActiveCall, outbound: OriginateRequest | undefined, answeredAt: Date, log: Logger): Promise<string | undefined> {
    const { info } = call;
    const ours = outbound ? info.caller : info.dialled;
    try {
      return await this.o.recorder.startCall({
        // One id from SIP to record to logs: the record takes the gateway's call id (a uuid).
        ...(isUuid(info.id) ? { id: info.id } : {}),
        sipCallId: info.sipCallId,
        sip: { transport: info.transport.toLowerCase(), remoteAddress: info.remoteAddress, ...(call.media.codec ? { codec: call.media.codec } : {}) },
        tenantId: info.tenantId,
        direction: callDirection(info, outbound),
        startedAt: answeredAt,
        // A web call to a recipe has no number: its record names none.
        ...(info.numberId ? { phoneNumberId: info.numberId, phoneNumber: ours } : {}),
        remoteNumber: outbound ? info.dialled : info.caller,
        recipeId: info.recipeId,
        language: info.language,
        ...(outbound ? campaignColumns(outbound) : {}),
      });
    } catch (error) {
      log.warn({ err: errorMessage(error) }, 'could not record the call start');
      return undefined;
    }
  }

  /** Loads the call's setup, records it, runs its recipe (or says its language is not supported) and hangs up. */
  private async run(call: ActiveCall, outbound: OriginateRequest | undefined, recordId: string | undefined, log: Logger, state: CallState): Promise<{ recordingRef?: string; failure?: string }> {
    const { info } = call;
    const ours = outbound ? info.caller : info.dialled;
    let recordingRef: string | undefined;
    let failure: string | undefined;
    try {
      const setup = await loadCallSetup(this.o.db, info, ours, this.o.speech);
      if (!setup) throw new Error(`recipe ${info.recipeId} of number ${ours} was not found`);
      recordingRef = await startCallRecording(call, this.o.recordingsDir, recordId, log);
      const speech = callSpeech({
        language: setup.language,
        keywords: setup.keywords,
        ...(setup.profile ? { profile: setup.profile } : {}),
        settings: setup.speech,
        log,
        onSttLost: () => {
          state.sttLost = true;
          state.stopRecipe.abort();
        },
      });
      // A recipe that waits for the caller's words cannot run in a language nothing recognises:
      // say so at once and end, instead of greeting and then waiting on words nobody can hear.
      if (speech.unsupported && recipeListens(setup.recipe)) {
        log.warn({ language: setup.language, reason: speech.unsupported }, 'unsupported language: telling the caller and ending the call');
        state.speechEnd = { reason: 'unsupported_language', line: await sayUnsupportedLanguage(call, speech, setup.language, setup.speech.unsupportedLanguageMessages) };
      } else {
        await runRecipeOnCall(this.o, call, outbound, setup, speech, recordId, log, state);
      }
    } catch (error) {
      failure = errorMessage(error);
      log.error({ err: failure }, 'recipe call failed: ending the call');
    } finally {
      state.early.stop();
      if (recordingRef) await finishCallRecording(call, recordingRef, this.o.keepRecording, log);
      const why = failure ? 'handler-error' : state.speechEnd ? state.speechEnd.reason.replace('_', '-') : 'recipe-ended';
      if (!call.signal.aborted) await call.hangup(why).catch(() => undefined);
    }
    return { ...(recordingRef ? { recordingRef } : {}), ...(failure !== undefined ? { failure } : {}) };
  }
}

/** The campaign ids are uuid columns: an id of another shape is left out rather than failing the record. */
function campaignColumns(request: OriginateRequest): { campaignId?: string; messageId?: string; attempt?: number; variables: Readonly<Record<string, unknown>> } {
  const { campaignId, messageId, attempt, variables } = request.context;
  return { ...(isUuid(campaignId) ? { campaignId } : {}), ...(isUuid(messageId) ? { messageId, attempt } : {}), variables };
}

/** The call's completion, or undefined when hang-up did not settle within `ms`. */
async function settled(call: ActiveCall, ms: number): Promise<{ endedAt: number; reason: string } | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  try {
    const end = await Promise.race([call.ended, timeout]);
    return end ? { endedAt: end.endedAt, reason: end.reason } : undefined;
  } finally {
    clearTimeout(timer);
  }
}
