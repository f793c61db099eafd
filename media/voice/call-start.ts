import { CallEndedError } from '../../core/ports/conversation.js';
import type { PhoneConversation } from './phone-conversation.js';
import { counter, histogram } from '../../core/metrics.js';
import { AnsweringMachineDetector, GreetingEndWatch, type AmdDecision, type AmdOptions, type GreetingEndOptions } from './voicemail-detector.js';

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

/**
 * Holds the agent's first words on a screened (outbound) call until the answering-machine
 * screening lets it speak: the callee was judged a person (or `unknown`), or has said nothing at
 * all by the verdict deadline (a silent callee waits for us). While the callee talks the gate
 * stays shut: a person is not talked over, a machine's greeting is not talked into. On a machine
 * it never opens: the recipe is stopped instead.
 */
export class AgentStartGate {
  private release: () => void = () => undefined;
  private readonly opened = new Promise<void>((resolve) => (this.release = resolve));
  private openedAt: 'verdict' | 'quiet' | undefined;

  /** Why it opened, if it has. */
  get state(): 'verdict' | 'quiet' | undefined {
    return this.openedAt;
  }

  open(why: 'verdict' | 'quiet'): void {
    if (this.openedAt) return;
    this.openedAt = why;
    this.release();
  }

  /** Resolves once open; rejects with CallEndedError if `signal` aborts first (call over, or a machine stopped the recipe). */
  wait(signal: AbortSignal): Promise<void> {
    if (this.openedAt) return Promise.resolve();
    if (signal.aborted) return Promise.reject(new CallEndedError());
    return new Promise((resolve, reject) => {
      const onAbort = (): void => reject(new CallEndedError());
      signal.addEventListener('abort', onAbort, { once: true });
      void this.opened.then(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      });
    });
  }
}

/**
 * Holds the agent's first words per the campaign's start logic and, on a screened call, until the
 * screening's gate opens: the agent speaks at the later of the two.
 */
export async function applyStartLogic(conversation: PhoneConversation, logic: StartLogic, signal: AbortSignal, gate?: AgentStartGate): Promise<void> {
  if (logic.kind === 'waitSeconds' && (logic.seconds < 1 || logic.seconds > 5)) throw new RangeError('start logic wait must be 1 to 5 seconds');
  await Promise.all([startLogicDelay(conversation, logic, signal), gate?.wait(signal)]);
}

async function startLogicDelay(conversation: PhoneConversation, logic: StartLogic, signal: AbortSignal): Promise<void> {
  if (logic.kind === 'immediately') return;
  if (logic.kind === 'waitSeconds') return sleep(logic.seconds * 1000, signal);
  // Wait for the caller's greeting ("Hello?"); a caller who says nothing gets the agent anyway.
  await conversation.waitForGreeting(logic.maxWaitMs ?? 5000, signal);
}

/** The caller's audio, frame by frame (PhoneConversation.tap). */
export type CallerAudio = Pick<PhoneConversation, 'tap'>;

/**
 * Taps the caller's audio until `onFrame` returns a result. Rejects with CallEndedError when
 * `signal` aborts; `onTimeout` (wall clock, for a line that sends no audio at all, where no
 * frame would ever come) may settle it too.
 */
function listenUntil<T>(audio: CallerAudio, signal: AbortSignal, onFrame: (samples: Int16Array) => T | undefined, timeout?: { readonly ms: number; readonly onTimeout: () => T | undefined }): Promise<T> {
  return new Promise((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const finish = (outcome: T | Error): void => {
      untap();
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    const onAbort = (): void => finish(new CallEndedError());
    if (signal.aborted) return reject(new CallEndedError());
    const untap = audio.tap((samples) => {
      const result = onFrame(samples);
      if (result !== undefined) finish(result);
    });
    signal.addEventListener('abort', onAbort, { once: true });
    if (timeout) {
      timer = setTimeout(() => {
        const result = timeout.onTimeout();
        if (result !== undefined) finish(result);
      }, timeout.ms);
    }
  });
}

export interface DetectionOptions extends AmdOptions {
  /** Opened when the callee has said nothing for `quietMs` (of audio, or of wall time without any audio). */
  readonly gate?: AgentStartGate;
  /** The verdict deadline for a silent callee: the agent may start. Default 3000 ms. */
  readonly quietMs?: number;
}

/** Runs the answering-machine detector on the call's audio until it decides (see voicemail-detector.ts). */
export function detectAnsweringMachine(audio: CallerAudio, signal: AbortSignal, options: DetectionOptions = {}): Promise<AmdDecision> {
  const amd = new AnsweringMachineDetector(options);
  const { gate } = options;
  const quietMs = options.quietMs ?? 3000;
  // A callee that sends no RTP at all never reaches the detector's rules: wall-clock timers.
  const quiet = gate ? setTimeout(() => amd.heardMs === 0 && gate.open('quiet'), quietMs) : undefined;
  const noAudio = { ms: options.silenceMs ?? 5000, onTimeout: (): AmdDecision | undefined => (amd.heardMs === 0 ? { verdict: 'unknown', reason: 'silence', afterMs: 0 } : undefined) };
  const deciding = listenUntil(
    audio,
    signal,
    (samples) => {
      const decision = amd.feed(samples);
      if (gate && !decision && !amd.heardSpeech && amd.heardMs >= quietMs) gate.open('quiet');
      return decision;
    },
    noAudio,
  );
  return deciding.finally(() => clearTimeout(quiet));
}

export interface GreetingWaitOptions extends GreetingEndOptions {
  /** A watch already fed from answer (screening), so a beep that began before the verdict is seen. */
  readonly watch?: GreetingEndWatch;
  /** Longest wait for the beep or the end of the greeting; then the message is spoken anyway. Default 20 s. */
  readonly maxWaitMs?: number;
}

/**
 * Resolves when a machine is ready to record: 'beep' at the end of its beep, 'silence' when its
 * greeting ended without one, 'timeout' after `maxWaitMs` of caller audio (or wall time, for a
 * line that stopped sending audio).
 */
export function waitForGreetingEnd(audio: CallerAudio, signal: AbortSignal, options: GreetingWaitOptions = {}): Promise<'beep' | 'silence' | 'timeout'> {
  const watch = options.watch ?? new GreetingEndWatch(options);
  const maxWaitMs = options.maxWaitMs ?? 20_000;
  const ready = watch.state;
  if (ready) return Promise.resolve(ready);
  const startedAt = watch.heardMs;
  return listenUntil(
    audio,
    signal,
    (samples) => {
      // A watch of its own is fed here; a shared one is fed by its owner's tap.
      if (!options.watch) watch.feed(samples);
      return watch.state ?? (watch.heardMs - startedAt >= maxWaitMs ? 'timeout' : undefined);
    },
    { ms: maxWaitMs + 1000, onTimeout: () => 'timeout' },
  );
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
 * The recipe's voicemail handling once a machine answered: hang up, or wait until the machine
 * records (its beep, or the end of a greeting without one; bounded) and leave the message in the
 * call's language, so the message is never spoken over the greeting.
 */
export async function handleVoicemail(
  conversation: PhoneConversation,
  handling: VoicemailHandling,
  language: string,
  signal: AbortSignal,
  wait: GreetingWaitOptions = {},
): Promise<'disconnected' | 'messageLeft'> {
  const message = handling.action === 'leaveMessage' ? voicemailMessageFor(handling.messages, language) : undefined;
  if (!message) {
    await conversation.hangup();
    return 'disconnected';
  }
  await waitForGreetingEnd(conversation, signal, wait);
  await conversation.say(message, { bargeIn: false, signal });
  await conversation.hangup();
  return 'messageLeft';
}

export type ScreeningOutcome = 'human' | 'unknown' | 'disconnected' | 'messageLeft';

export interface ScreeningOptions extends DetectionOptions {
  /** How the message waits for the machine to record. */
  readonly greeting?: Omit<GreetingWaitOptions, 'watch'>;
  /** Told the verdict once (also `unknown`/`call-ended` when the call ends first), for the call record. */
  readonly onVerdict?: (decision: AmdDecision) => void;
}

const verdicts = counter('amd_verdicts_total', 'Answering-machine detection verdicts on outbound calls, by verdict and the rule that decided', ['verdict', 'reason']);
const decisionTime = histogram('amd_decision_seconds', 'Caller audio heard from answer until the answering-machine verdict', ['verdict'], [0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 5, 6]);

/**
 * Outbound answering-machine screening (a 200 OK looks the same for a person and a machine). The
 * detector listens to the first seconds of the call; with `gate` the recipe's first words wait
 * for it (AgentStartGate: opened on `human` or `unknown`, or by a callee silent until the
 * deadline). On `machine` it calls `stopRecipe` (a recipe that had begun stops talking) and
 * applies the recipe's voicemail handling: hang up, or wait for the beep (or the greeting's end)
 * and leave the message. Resolves `human` or `unknown` (treated as a person) as soon as the
 * detector says so. Rejects with CallEndedError when the call ends first.
 */
export async function screenForVoicemail(
  conversation: PhoneConversation,
  handling: VoicemailHandling,
  language: string,
  signal: AbortSignal,
  stopRecipe: () => void,
  options: ScreeningOptions = {},
): Promise<ScreeningOutcome> {
  // Fed from answer beside the detector: a beep-only machine's beep is under way at the verdict.
  const watch = new GreetingEndWatch(options.greeting);
  const untap = conversation.tap((samples) => watch.feed(samples));
  const report = (decision: AmdDecision): void => {
    verdicts.inc({ verdict: decision.verdict, reason: decision.reason });
    decisionTime.observe({ verdict: decision.verdict }, decision.afterMs / 1000);
    options.onVerdict?.(decision);
  };
  try {
    let decision: AmdDecision;
    try {
      decision = await detectAnsweringMachine(conversation, signal, options);
    } catch (error) {
      if (error instanceof CallEndedError) report({ verdict: 'unknown', reason: 'call-ended', afterMs: watch.heardMs });
      // Fail open: an agent kept mute for the rest of the call is worse than one that speaks.
      else options.gate?.open('verdict');
      throw error;
    }
    report(decision);
    if (decision.verdict !== 'machine') {
      options.gate?.open('verdict');
      return decision.verdict;
    }
    stopRecipe();
    return await handleVoicemail(conversation, handling, language, signal, { ...options.greeting, watch });
  } finally {
    untap();
  }
}
