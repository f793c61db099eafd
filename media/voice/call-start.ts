import { CallEndedError } from '../../core/ports/conversation.js';
import type { PhoneConversation } from './phone-conversation.js';
import { AnsweringMachineDetector, BeepDetector, type AmdOptions, type AmdVerdict } from './voicemail-detector.js';

/** Campaign "Start logic". */
export type StartLogic = { readonly kind: 'immediately' } | { readonly kind: 'waitForGreeting'; readonly maxWaitMs?: number } | { readonly kind: 'waitSeconds'; readonly seconds: number };

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new CallEndedError());
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new CallEndedError());
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Holds the agent's first words per the campaign's start logic. */
export async function applyStartLogic(conversation: PhoneConversation, logic: StartLogic, signal: AbortSignal): Promise<void> {
  if (logic.kind === 'immediately') return;
  if (logic.kind === 'waitSeconds') {
    if (logic.seconds < 1 || logic.seconds > 5) throw new RangeError('start logic wait must be 1 to 5 seconds');
    return sleep(logic.seconds * 1000, signal);
  }
  // Wait for the caller's greeting ("Hello?"); a caller who says nothing gets the agent anyway.
  await conversation.waitForGreeting(logic.maxWaitMs ?? 5000, signal);
}

/** Runs the answering-machine detector on the call's audio until it decides (or `maxMs`: human). */
export function detectAnsweringMachine(conversation: PhoneConversation, signal: AbortSignal, options: AmdOptions & { readonly maxMs?: number } = {}): Promise<AmdVerdict> {
  return new Promise((resolve, reject) => {
    const amd = new AnsweringMachineDetector(options);
    let elapsed = 0;
    const finish = (outcome: AmdVerdict | Error): void => {
      untap();
      signal.removeEventListener('abort', onAbort);
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    const onAbort = (): void => finish(new CallEndedError());
    const untap = conversation.tap((samples) => {
      elapsed += 20;
      const verdict = amd.feed(samples) ?? (elapsed >= (options.maxMs ?? 8000) ? 'human' : undefined);
      if (verdict) finish(verdict);
    });
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Resolves true at the end of the voicemail beep, false when none came within `timeoutMs`. */
export function waitForBeep(conversation: PhoneConversation, signal: AbortSignal, timeoutMs = 15_000): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const beep = new BeepDetector();
    let elapsed = 0;
    const finish = (outcome: boolean | Error): void => {
      untap();
      signal.removeEventListener('abort', onAbort);
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    const onAbort = (): void => finish(new CallEndedError());
    const untap = conversation.tap((samples) => {
      elapsed += 20;
      if (beep.feed(samples)) finish(true);
      else if (elapsed >= timeoutMs) finish(false);
    });
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

export interface VoicemailHandling {
  readonly action: 'disconnect' | 'leaveMessage';
  /** Message per language tag (recipe global settings). */
  readonly messages: Readonly<Record<string, string>>;
}

/** The message for `language`: exact tag, then the same primary language, then the first one. */
export function voicemailMessageFor(messages: Readonly<Record<string, string>>, language: string): string | undefined {
  const entries = Object.entries(messages);
  const lower = language.toLowerCase();
  const primary = lower.split('-')[0];
  return (
    entries.find(([tag]) => tag.toLowerCase() === lower)?.[1] ??
    entries.find(([tag]) => tag.toLowerCase().split('-')[0] === primary)?.[1] ??
    entries[0]?.[1]
  );
}

/**
 * The recipe's voicemail handling once a machine answered: hang up, or wait for the beep (the
 * message must not be spoken over the greeting) and leave the message in the call's language.
 */
export async function handleVoicemail(conversation: PhoneConversation, handling: VoicemailHandling, language: string, signal: AbortSignal): Promise<'disconnected' | 'messageLeft'> {
  const message = handling.action === 'leaveMessage' ? voicemailMessageFor(handling.messages, language) : undefined;
  if (!message) {
    await conversation.hangup();
    return 'disconnected';
  }
  await waitForBeep(conversation, signal);
  await conversation.say(message, { bargeIn: false, signal });
  await conversation.hangup();
  return 'messageLeft';
}

export type ScreeningOutcome = 'human' | 'disconnected' | 'messageLeft';

/**
 * Outbound answering-machine screening beside the recipe (a 200 OK looks the same for a person
 * and a machine). The detector listens to the first seconds of the call while the start logic
 * and the recipe go on, so a person waits for nothing; on `machine` it calls `stopRecipe` (the
 * agent stops talking over the greeting) and applies the recipe's voicemail handling: hang up, or
 * wait for the beep and leave the message. Resolves `human` as soon as a person is detected.
 * Rejects with CallEndedError when the call ends first.
 */
export async function screenForVoicemail(
  conversation: PhoneConversation,
  handling: VoicemailHandling,
  language: string,
  signal: AbortSignal,
  stopRecipe: () => void,
  options: AmdOptions & { readonly maxMs?: number } = {},
): Promise<ScreeningOutcome> {
  const verdict = await detectAnsweringMachine(conversation, signal, options);
  if (verdict === 'human') return 'human';
  stopRecipe();
  return handleVoicemail(conversation, handling, language, signal);
}
