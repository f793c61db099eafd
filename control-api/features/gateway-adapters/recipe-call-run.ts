import { errorMessage } from '../../../core/errors.js';
import type { Logger } from '../../../core/logger.js';
import type { ActiveCall } from '../../../core/ports/call-handler.js';
import type { CallTransfer, CallTransferOutcome } from '../../../core/ports/call-transfer.js';
import type { OriginateRequest } from '../../../core/ports/originator.js';
import { AgentStartGate, applyStartLogic, screenForVoicemail, type ScreeningOutcome, type StartLogic } from '../../../media/voice/call-start.js';
import type { EarlyAudio } from '../../../media/voice/early-audio.js';
import type { PhoneConversation, TurnSettings } from '../../../media/voice/phone-conversation.js';
import { voiceSession } from '../../../media/voice/voice-session.js';
import type { AnsweringMachineResult, TranscriptLine } from '../calls/call-types.js';
import { defaultBlocks } from '../recipes/blocks/index.js';
import { RecipeRun, type RunResult } from '../recipes/runtime/recipe-run.js';
import type { RuntimeServices } from '../recipes/runtime/services.js';
import type { CallSetup } from './call-setup.js';
import { sayUnsupportedLanguage, type CallSpeech } from './call-speech.js';

/**
 * The recipe run of one answered call (RecipeCallHandler's middle part): the voice session built
 * from the call's speech settings, the RecipeRun on it, answering-machine screening and start
 * logic on calls we placed, and how the call is left when the run ends.
 */

/** What the run needs of the handler's options. */
export interface RecipeRunDeps {
  /** The tenant's runtime services (platform-services.ts): engine, HTTP, knowledge, webhooks. */
  readonly services: (tenantId: string) => Promise<RuntimeServices>;
  /** The gateway's Transfer action; without it a Transfer block takes its `failed` exit. */
  readonly transfer?: CallTransfer;
  /** Turn-taking overrides (tests use a shorter endpointing silence). */
  readonly turn?: TurnSettings;
}

/** What one call's run left for its record. */
export interface CallState {
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

/** Runs the recipe on the call, then hangs up (or waits for a bridged transfer to end). */
export async function runRecipeOnCall(deps: RecipeRunDeps, call: ActiveCall, outbound: OriginateRequest | undefined, setup: CallSetup, speech: CallSpeech, recordId: string | undefined, log: Logger, state: CallState): Promise<void> {
  const { info } = call;
  const { stopRecipe } = state;
  const services = await deps.services(info.tenantId);
  // No await from here until the detector taps the audio: the ear starts on the frames kept
  // since answer at once, and the detector must hear them too.
  const conversation = conversationOf(deps, call, setup, speech, log, state.transfers, state.early);
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
      log.info({ err: errorMessage(error) }, 'voicemail handling ended early');
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

function conversationOf(deps: RecipeRunDeps, call: ActiveCall, setup: CallSetup, { tts, stt, voice, ttsLanguage }: CallSpeech, log: Logger, transfers: CallTransferOutcome[], early: EarlyAudio): PhoneConversation {
  const global = setup.recipe.globalSettings;
  return voiceSession({
    call,
    stt,
    tts,
    speech: { voice, language: ttsLanguage, ...(setup.profile ? { profileName: setup.profile.name } : {}), sttLanguage: setup.language, keywords: setup.keywords },
    turn: { smartInterruption: global?.smartInterruption ?? false, cautionOnNoisyLines: global?.cautionOnNoisyLines ?? false, ...deps.turn },
    rules: setup.rules,
    early,
    ...(deps.transfer ? { transfer: deps.transfer } : {}),
    onTransfer: (outcome) => transfers.push(outcome),
    log,
  });
}

/** How the call reached the platform: a campaign dial, a browser, or a phone call in. */
export function callDirection(info: ActiveCall['info'], outbound: OriginateRequest | undefined): 'outbound' | 'web' | 'inbound' {
  if (outbound) return 'outbound';
  return info.channel === 'web' ? 'web' : 'inbound';
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

