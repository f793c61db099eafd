import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Kysely } from 'kysely';
import type { Logger } from '../../../core/logger.js';
import type { ActiveCall, CallHandler } from '../../../core/ports/call-handler.js';
import type { CallTransfer, CallTransferOutcome } from '../../../core/ports/call-transfer.js';
import type { TransferResult } from '../../../core/ports/conversation.js';
import type { OriginateRequest } from '../../../core/ports/originator.js';
import { PronunciationLexicon, type PronunciationRule } from '../../../media/speech/pronunciation.js';
import { AgentStartGate, applyStartLogic, screenForVoicemail, type ScreeningOutcome, type StartLogic } from '../../../media/voice/call-start.js';
import { PhoneConversation, type TurnSettings } from '../../../media/voice/phone-conversation.js';
import type { CallRecorder } from '../calls/call-recorder.js';
import type { AnsweringMachineResult, CallEnd, TranscriptLine } from '../calls/call-types.js';
import { isUuid } from '../calls/call-repository.js';
import { callEndFromRun, callSteps, gatewayEndReason, transcriptLines } from '../calls/run-record.js';
import type { PronunciationEntrySpec } from '../../model/domain/pronunciation-entry.js';
import type { SpeechProfileSpec } from '../../model/domain/speech-profile.js';
import { defaultBlocks } from '../recipes/blocks/index.js';
import type { Recipe } from '../../model/recipes/recipe-schema.js';
import { RecipeRun, type RunResult } from '../recipes/runtime/recipe-run.js';
import type { RuntimeServices } from '../recipes/runtime/services.js';
import { findNumberByE164, findRecipeById, findSpeechProfileByName } from '../../model/resources/definitions/lookups.js';
import type { Database } from '../../platform/store/schema.js';
import { offlineSpeech, type TenantCallSpeech } from '../../model/tenants/tenant-speech.js';
import { recordedEnd } from './call-end-record.js';
import { EarlyAudio } from '../../../media/voice/early-audio.js';
import { callSpeech, recipeListens, sayUnsupportedLanguage, type CallSpeech } from './call-speech.js';

export interface RecipeCallHandlerOptions {
  readonly db: Kysely<Database>;
  readonly recorder: CallRecorder;
  /** The tenant's runtime services (platform-services.ts): engine, HTTP, knowledge, webhooks. */
  readonly services: (tenantId: string) => Promise<RuntimeServices>;
  readonly logger: Logger;
  /** Where call recordings are written (`<dataDir>/recordings`); none: calls are not recorded. */
  readonly recordingsDir?: string;
  /** Gets each finished recording's ref before the call record names it (shared store, calls/recordings.ts). */
  readonly keepRecording?: (ref: string) => Promise<void>;
  /** The gateway's Transfer action; without it a Transfer block takes its `failed` exit. */
  readonly transfer?: CallTransfer;
  /** The tenant's speech settings, read per call (tenant-speech.ts); none: offline speech (espeak-ng, pocketsphinx). */
  readonly speech?: (tenantId: string) => Promise<TenantCallSpeech>;
  /** Turn-taking overrides (tests use a shorter endpointing silence). */
  readonly turn?: TurnSettings;
}

/** What a call needs from the store before the agent speaks. */
interface CallSetup {
  readonly recipe: Recipe;
  readonly language: string;
  readonly keywords: readonly string[];
  readonly profile?: { readonly name: string; readonly spec: SpeechProfileSpec };
  readonly rules: readonly PronunciationRule[];
  readonly timezone: string;
  readonly tenantName?: string;
  readonly speech: TenantCallSpeech;
}

/** What one call's run left for its record. */
interface CallState {
  run?: RecipeRun;
  result?: RunResult;
  voicemail?: ScreeningOutcome;
  /** The answering-machine verdict of a screened (outbound) call. */
  answeringMachine?: AnsweringMachineResult;
  /** Set when the call ended because nothing could understand its language (no recipe outcome). */
  speechEnd?: { readonly reason: 'unsupported_language' | 'speech_unavailable'; readonly line: TranscriptLine };
  /** Every speech-to-text provider of the call was dropped (fallback.ts): the recipe is stopped. */
  sttLost: boolean;
  readonly stopRecipe: AbortController;
  /** The caller's audio, read from answer until the conversation's ear takes it over. */
  readonly early: EarlyAudio;
  /** What each Transfer block got from the gateway: a transfer never confirmed must not be recorded as completed. */
  readonly transfers: CallTransferOutcome[];
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
    const ours = outbound ? info.caller : info.dialled;
    const remote = outbound ? info.dialled : info.caller;
    let recordId: string | undefined;
    try {
      recordId = await this.o.recorder.startCall({
        // One id from SIP to record to logs: the record takes the gateway's call id (a uuid).
        ...(isUuid(info.id) ? { id: info.id } : {}),
        sipCallId: info.sipCallId,
        sip: { transport: info.transport.toLowerCase(), remoteAddress: info.remoteAddress, ...(call.media.codec ? { codec: call.media.codec } : {}) },
        tenantId: info.tenantId,
        direction: callDirection(info, outbound),
        startedAt: answeredAt,
        // A web call to a recipe has no number: its record names none.
        ...(info.numberId ? { phoneNumberId: info.numberId, phoneNumber: ours } : {}),
        remoteNumber: remote,
        recipeId: info.recipeId,
        language: info.language,
        ...(outbound ? campaignColumns(outbound) : {}),
      });
    } catch (error) {
      log.warn({ err: errorText(error) }, 'could not record the call start');
    }
    call.on('dtmf', (e) => log.debug({ digit: e.digit, via: e.via }, 'DTMF received'));

    const state: CallState = { sttLost: false, stopRecipe: new AbortController(), transfers: [], early };
    let recordingRef: string | undefined;
    let failure: string | undefined;
    try {
      const setup = await this.load(call, ours);
      if (!setup) throw new Error(`recipe ${info.recipeId} of number ${ours} was not found`);
      recordingRef = await this.startRecording(call, recordId, log);
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
        await this.runRecipe(call, outbound, setup, speech, recordId, log, state);
      }
    } catch (error) {
      failure = errorText(error);
      log.error({ err: failure }, 'recipe call failed: ending the call');
    } finally {
      early.stop();
      if (recordingRef) await this.finishRecording(call, recordingRef, log);
      const why = failure ? 'handler-error' : state.speechEnd ? state.speechEnd.reason.replace('_', '-') : 'recipe-ended';
      if (!call.signal.aborted) await call.hangup(why).catch(() => undefined);
    }
    const end = await settled(call, END_SETTLE_MS);
    if (!recordId) return;
    const endedAt = new Date(end?.endedAt ?? Date.now());
    const { run, result, voicemail, speechEnd } = state;
    const amd = state.answeringMachine ? { answeringMachine: state.answeringMachine } : {};
    const facts = { endReason: end?.reason, transfers: state.transfers };
    try {
      if (speechEnd) {
        // Nothing could understand the caller: no recipe outcome, so no disposition either.
        const ran = result ? callEndFromRun(result, { endedAt, answeredAt }) : undefined;
        const callEnd: CallEnd = {
          endedAt,
          answeredAt,
          outcome: 'completed',
          sipStatus: 200,
          endReason: speechEnd.reason,
          transcript: [...(ran?.transcript ?? []), speechEnd.line],
          ...(ran?.steps ? { steps: ran.steps } : {}),
          ...(ran?.variables ? { variables: ran.variables } : {}),
          ...(recordingRef ? { recordingRef } : {}),
          ...amd,
        };
        await this.o.recorder.completeCall(recordId, callEnd);
      } else if (result) {
        // The run sees any end of the call as a hang-up; the gateway knows whether a limit, a
        // transfer or the caller ended it.
        const callEnd = { ...callEndFromRun(result, { endedAt, answeredAt, ...(end ? { callEndReason: end.reason } : {}), ...(recordingRef ? { recordingRef } : {}) }), ...amd };
        // A machine answered: the record says so instead of "the caller hung up".
        await this.o.recorder.completeCall(recordId, recordedEnd(voicemail ? { ...callEnd, endReason: 'voicemail', disposition: `voicemail_${voicemail === 'messageLeft' ? 'message_left' : 'disconnected'}` } : callEnd, facts));
      } else {
        await this.o.recorder.completeCall(recordId, recordedEnd({
          endedAt,
          answeredAt,
          outcome: 'completed',
          sipStatus: 200,
          endReason: failure ? 'error' : (gatewayEndReason(end?.reason) ?? end?.reason ?? 'error'),
          transcript: transcriptLines(run?.transcript ?? []),
          // The path up to where the call stopped the run (or the handler failed).
          steps: callSteps(run?.steps ?? []),
          ...(run ? { variables: run.variables() } : {}),
          ...(recordingRef ? { recordingRef } : {}),
          ...amd,
        }, facts));
      }
    } catch (error) {
      log.warn({ err: errorText(error) }, 'could not record the call end');
    }
  }

  /** Runs the recipe on the call, then hangs up (or waits for a bridged transfer to end). */
  private async runRecipe(call: ActiveCall, outbound: OriginateRequest | undefined, setup: CallSetup, speech: CallSpeech, recordId: string | undefined, log: Logger, state: CallState): Promise<void> {
    const { info } = call;
    const { stopRecipe } = state;
    const services = await this.o.services(info.tenantId);
    // No await from here until the detector taps the audio: the ear starts on the frames kept
    // since answer at once, and the detector must hear them too.
    const conversation = this.conversation(call, setup, speech, log, state.transfers, state.early);
    const run = new RecipeRun({
      recipe: setup.recipe,
      conversation,
      context: {
        callId: recordId ?? info.id,
        tenantId: info.tenantId,
        ...(setup.tenantName ? { tenantName: setup.tenantName } : {}),
        timezone: setup.timezone,
        callerNumber: info.caller,
        calledNumber: info.dialled,
        direction: callDirection(info, outbound),
        language: setup.language,
        campaignVariables: scalarVariables(outbound?.context.variables ?? {}),
        now: () => Date.now(),
      },
      services,
      blocks: defaultBlocks,
    });
    state.run = run;
    run.on('error', (e) => log.warn({ blockId: e.blockId, err: e.message }, 'recipe run error'));
    // Outbound: the answering-machine detector listens from answer; the agent's first words wait
    // for its verdict (the gate), and on a machine the recipe is stopped and the recipe's
    // voicemail handling applies (spec: recipe global settings).
    const recipeSignal = AbortSignal.any([call.signal, stopRecipe.signal]);
    const gate = outbound ? new AgentStartGate() : undefined;
    const screening = outbound
      ? screenForVoicemail(conversation, setup.recipe.globalSettings.voicemail, setup.language, call.signal, () => stopRecipe.abort(), {
          ...(gate ? { gate } : {}),
          onVerdict: (d) => {
            state.answeringMachine = { verdict: d.verdict, afterMs: d.afterMs };
            log.info({ verdict: d.verdict, reason: d.reason, afterMs: d.afterMs }, 'answering-machine verdict');
          },
        })
      : undefined;
    screening?.catch(() => undefined);
    if (outbound) await applyStartLogic(conversation, startLogicOf(outbound), recipeSignal, gate).catch(ignoreIfStopped(stopRecipe.signal));
    const result = await run.run(recipeSignal);
    state.result = result;
    if (stopRecipe.signal.aborted && screening && !state.sttLost) {
      // The machine may hang up before the beep: detected, but no message left.
      state.voicemail = await screening.catch((error: unknown): ScreeningOutcome => {
        log.info({ err: errorText(error) }, 'voicemail handling ended early');
        return 'disconnected';
      });
      log.info({ voicemail: state.voicemail }, 'answering machine: voicemail handled');
    }
    log.info({ reason: result.reason, disposition: result.disposition, path: result.path }, 'recipe run ended');
    if (state.sttLost && !state.voicemail && !call.signal.aborted) {
      // Mid-call, every speech-to-text provider failed for good (fallback.ts): the recipe was
      // stopped, and the caller is told rather than left talking to nobody.
      log.warn({ language: setup.language }, 'speech-to-text lost for the rest of the call: telling the caller and ending the call');
      state.speechEnd = { reason: 'speech_unavailable', line: await sayUnsupportedLanguage(call, speech, setup.language, setup.speech.unsupportedLanguageMessages) };
      await conversation.hangup();
    } else if (result.reason === 'transferred' && !state.voicemail) {
      // A B2BUA transfer keeps the caller's leg up, bridged: the call ends when either leg does.
      await call.ended;
    } else {
      await conversation.hangup();
    }
  }

  private async load(call: ActiveCall, ours: string): Promise<CallSetup | undefined> {
    const { db } = this.o;
    const { info } = call;
    const [recipe, number, tenant, speech] = await Promise.all([
      findRecipeById(db, info.tenantId, info.recipeId),
      findNumberByE164(db, ours, info.tenantId),
      db.selectFrom('tenants').select(['name', 'timezone']).where('id', '=', info.tenantId).executeTakeFirst(),
      this.o.speech ? this.o.speech(info.tenantId) : offlineSpeech,
    ]);
    if (!recipe) return undefined;
    const spec = number?.spec;
    // A built-in profile is not a row: resolve through the catalogue as well as the table.
    const profile: CallSetup['profile'] = spec?.voice ? await findSpeechProfileByName(db, info.tenantId, spec.voice) : undefined;
    const words = spec?.pronunciationWords ?? [];
    const rules =
      words.length === 0
        ? []
        : (await db.selectFrom('pronunciation_entries').select('spec').where('tenant_id', '=', info.tenantId).where('word', 'in', words).execute()).map((r) => {
            const e = r.spec as PronunciationEntrySpec;
            return { word: e.word, pronunciation: e.pronunciation, caseSensitive: e.caseSensitive, speechProfiles: e.speechProfiles };
          });
    return {
      recipe,
      language: spec?.language ?? info.language,
      keywords: spec?.boostedKeywords ?? [],
      ...(profile ? { profile } : {}),
      rules,
      timezone: tenant?.timezone ?? 'UTC',
      ...(tenant?.name ? { tenantName: tenant.name } : {}),
      speech,
    };
  }

  /** Stops the recording and hands it to the shared store; a failed copy leaves it in the local directory. */
  private async finishRecording(call: ActiveCall, ref: string, log: Logger): Promise<void> {
    try {
      await call.media.stopRecording();
    } catch (error) {
      log.warn({ err: errorText(error) }, 'could not stop the recording');
      return;
    }
    try {
      await this.o.keepRecording?.(ref);
    } catch (error) {
      log.warn({ err: errorText(error), ref }, 'could not copy the recording to the shared store: only this node serves it');
    }
  }

  /** Starts the stereo recording under `<recordingsDir>/<yyyy-mm-dd>/<call>.wav`; returns its ref. */
  private async startRecording(call: ActiveCall, recordId: string | undefined, log: Logger): Promise<string | undefined> {
    if (!this.o.recordingsDir) return undefined;
    const ref = path.join(new Date(call.info.startedAt).toISOString().slice(0, 10), `${recordId ?? call.info.id}.wav`);
    try {
      await mkdir(path.join(this.o.recordingsDir, path.dirname(ref)), { recursive: true });
      await call.media.startRecording(path.join(this.o.recordingsDir, ref));
      return ref;
    } catch (error) {
      // A call without a recording still runs: the caller should not pay for a full disk.
      log.warn({ err: errorText(error) }, 'could not start the call recording');
      return undefined;
    }
  }

  private conversation(call: ActiveCall, setup: CallSetup, { tts, stt, voice, ttsLanguage }: CallSpeech, log: Logger, transfers: CallTransferOutcome[], early: EarlyAudio): PhoneConversation {
    const global = setup.recipe.globalSettings;
    const transfer = this.o.transfer;
    const conversation = new PhoneConversation({
      media: call.media,
      input: early.reader(),
      stt,
      tts,
      speech: {
        voice,
        language: ttsLanguage,
        ...(setup.profile ? { profileName: setup.profile.name } : {}),
        sttLanguage: setup.language,
        keywords: setup.keywords,
      },
      turn: { smartInterruption: global?.smartInterruption ?? false, cautionOnNoisyLines: global?.cautionOnNoisyLines ?? false, ...this.o.turn },
      ...(setup.rules.length > 0 ? { lexicon: new PronunciationLexicon(setup.rules) } : {}),
      signal: call.signal,
      hangup: () => call.hangup('agent-closed'),
      onCallerSpeech: () => call.noteCallerSpeech(),
      onIgnoredUtterance: (text, why) => log.debug({ why, chars: text.length }, 'caller words ignored'),
      logger: log,
      // The Transfer block has already spoken the bridge message.
      transfer: async (target, _bridgeMessage, signal): Promise<TransferResult> => {
        if (!transfer) return { ok: false, reason: 'call transfer is not available on this gateway' };
        const outcome = await transfer.transfer(call.info.id, target, signal);
        transfers.push(outcome);
        return outcome.ok ? { ok: true } : { ok: false, reason: outcome.sipStatus ? `${outcome.reason} (SIP ${outcome.sipStatus})` : outcome.reason };
      },
    });
    return conversation;
  }
}

/** How the call reached the platform: a campaign dial, a browser, or a phone call in. */
function callDirection(info: ActiveCall['info'], outbound: OriginateRequest | undefined): 'outbound' | 'web' | 'inbound' {
  if (outbound) return 'outbound';
  return info.channel === 'web' ? 'web' : 'inbound';
}

/** The campaign ids are uuid columns: an id of another shape is left out rather than failing the record. */
function campaignColumns(request: OriginateRequest): { campaignId?: string; messageId?: string; attempt?: number; variables: Readonly<Record<string, unknown>> } {
  const { campaignId, messageId, attempt, variables } = request.context;
  return { ...(isUuid(campaignId) ? { campaignId } : {}), ...(isUuid(messageId) ? { messageId, attempt } : {}), variables };
}

function startLogicOf(request: OriginateRequest): StartLogic {
  const logic = request.startLogic;
  if (logic.mode === 'waitSeconds') return { kind: 'waitSeconds', seconds: logic.seconds };
  return logic.mode === 'waitForGreeting' ? { kind: 'waitForGreeting' } : { kind: 'immediately' };
}

/** Campaign variables the recipe can read: SendMessage values are scalars; anything else is dropped. */
function scalarVariables(input: Readonly<Record<string, unknown>>): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const [k, v] of Object.entries(input)) if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[k] = v;
  return out;
}

/** A wait cut short because the recipe was stopped (voicemail) is not a failure. */
function ignoreIfStopped(stopped: AbortSignal): (error: unknown) => void {
  return (error) => {
    if (!stopped.aborted) throw error;
  };
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
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
