import { systemClock, type Clock } from '../../core/clock.js';
import { silentLogger, type Logger } from '../../core/logger.js';
import {
  CallEndedError,
  type Conversation,
  type Heard,
  type IgnoredWhy,
  type ListenExpectation,
  type ListenOptions,
  type SayOptions,
  type SayResult,
  type TransferResult,
} from '../../core/ports/conversation.js';
import type { AudioFrame, CallMediaSession } from '../../core/ports/media.js';
import type { PronunciationLexicon } from '../speech/pronunciation.js';
import type { SttProvider, TtsProvider } from '../speech/speech-provider.js';
import { Hearing, type CallerTurn, type HearingHooks, type Recognition, type TurnDetection } from './hearing.js';
import { sentencesOf, splitSentences } from './sentences.js';
import { Speaker, type SpeechSettings, type SpokenLine } from './speaking.js';

export type { SpeechSettings } from './speaking.js';

export interface TurnSettings extends TurnDetection {
  /** Recipe "Smart Interruption": only sustained speech, not a backchannel, interrupts. */
  readonly smartInterruption?: boolean;
  /** Sustained speech that counts as an interruption under Smart Interruption. Default 500 ms (900 ms with caution). */
  readonly sustainedSpeechMs?: number;
}

export interface PhoneConversationOptions {
  readonly media: CallMediaSession;
  /** The caller's audio kept since answer (EarlyAudio.reader()); else the ear hears from its creation. */
  readonly input?: AsyncIterator<AudioFrame>;
  readonly stt: SttProvider;
  readonly tts: TtsProvider;
  readonly speech: SpeechSettings;
  readonly turn?: TurnSettings;
  readonly lexicon?: PronunciationLexicon;
  /** The call's signal: when it aborts, every STT/TTS task of the call stops. */
  readonly signal: AbortSignal;
  readonly transfer?: (target: string, bridgeMessage: string, signal: AbortSignal) => Promise<TransferResult>;
  readonly hangup?: () => Promise<void>;
  /** The caller started speaking (restarts End Call on Silence in the gateway). */
  readonly onCallerSpeech?: () => void;
  /** Caller words that do not drive the flow (also delivered to `onIgnored` listeners). */
  readonly onIgnoredUtterance?: (text: string, why: IgnoredWhy) => void;
  /** Turn-taking moments as they happen (metrics, latency measurement). */
  readonly onTurnEvent?: (event: 'callerStarted' | 'callerEnded' | 'bargeIn', at: number) => void;
  readonly clock?: Clock;
  readonly logger?: Logger;
}

/** Short acknowledgements that are not an attempt to take the turn (Smart Interruption). */
const BACKCHANNEL = /^(mm+[- ]?h?mm+|m+|uh[- ]?huh|ok(ay)?|yeah|yes|yep|right|sure|hmm+|haan|ji|acha|achha|hm+)[.!,]*$/i;

/** Voiced time that makes a turn without recognised words worth a "Sorry?" (shorter: a cough, a click). */
const UNINTELLIGIBLE_MS = 400;

/** What the turn-taking policy remembers of a caller turn while it is recognised. */
interface TurnNote {
  /** The agent's line playing when the caller started, if any. */
  readonly during: SpokenLine | undefined;
  /** This turn stopped the agent. */
  interrupted: boolean;
}

/**
 * The voice pipeline's `Conversation`: `Hearing` (VAD, endpointing, STT, keypad) and `Speaker`
 * (TTS playout) joined by the turn-taking policy here: barge-in, Smart Interruption,
 * backchannels, what reaches `listen()` and what is only transcribed.
 */
export class PhoneConversation implements Conversation, HearingHooks {
  /** Heard and not yet taken, with the caller turn each came from. */
  private readonly heard: { readonly heard: Heard; readonly turn: number }[] = [];
  private readonly ignoredListeners: ((text: string, why: IgnoredWhy, turn?: number) => void)[] = [];
  private readonly notes = new Map<number, TurnNote>();
  private wake: (() => void) | undefined;
  /** Caller turns from this id on began while the current block listened (see `expect`). */
  private listeningFrom = 0;
  private ended = false;
  /** A transfer took the call: the ear stopped, but the call (and its output) goes on. */
  private handedOver = false;
  private readonly sustainedMs: number;
  private readonly logger: Logger;
  private readonly hearing: Hearing;
  private readonly speaker: Speaker;
  /** Closes when the ear has stopped (call over or handed over). */
  readonly done: Promise<void>;

  constructor(private readonly o: PhoneConversationOptions) {
    const turn = o.turn ?? {};
    this.logger = o.logger ?? silentLogger;
    this.sustainedMs = turn.sustainedSpeechMs ?? (turn.cautionOnNoisyLines ? 900 : 500);
    this.speaker = new Speaker({
      media: o.media,
      tts: o.tts,
      speech: o.speech,
      ...(o.lexicon ? { lexicon: o.lexicon } : {}),
      logger: this.logger,
      onBargeIn: () => o.onTurnEvent?.('bargeIn', performance.now()),
    });
    this.hearing = new Hearing({
      media: o.media,
      ...(o.input ? { input: o.input } : {}),
      stt: o.stt,
      language: o.speech.sttLanguage,
      keywords: o.speech.keywords,
      detection: turn,
      signal: o.signal,
      clock: o.clock ?? systemClock,
      logger: this.logger,
      hooks: this,
    });
    o.signal.addEventListener('abort', () => this.end(), { once: true });
    this.done = this.hearing.done.finally(() => {
      // After a hand-over the bridge owns the call's output: ending must not clear it.
      if (!this.handedOver) this.end();
    });
  }

  /** Every caller frame, for detectors that run beside the conversation (voicemail, beep). */
  tap(listener: (samples: Int16Array) => void): () => void {
    return this.hearing.tap(listener);
  }

  async say(text: string, options: SayOptions): Promise<SayResult> {
    this.throwIfEnded(options.signal);
    const result = await this.speaker.speak(toAsync(splitSentences(text)), options, this.o.signal, () => this.ended);
    return { interrupted: result.interrupted, ...(result.unspoken !== undefined ? { unspoken: result.unspoken } : {}) };
  }

  async sayStream(pieces: AsyncIterable<string>, options: SayOptions): Promise<SayResult & { text: string }> {
    this.throwIfEnded(options.signal);
    return this.speaker.speak(sentencesOf(pieces), options, this.o.signal, () => this.ended);
  }

  expect(expectation: ListenExpectation): void {
    // Words said before the block listened (during a Message, say) are no answer to it: those
    // already recognised, and those of a turn that began before now and is still being recognised.
    for (const { heard: stale, turn } of this.heard.splice(0)) if (stale.kind === 'utterance' && stale.text) this.ignore(stale.text, 'notListening', turn);
    this.listeningFrom = this.hearing.nextTurnId;
    this.hearing.expect(expectation);
  }

  get nextTurn(): number {
    return this.hearing.nextTurnId;
  }

  onIgnored(listener: (text: string, why: IgnoredWhy, turn?: number) => void): void {
    this.ignoredListeners.push(listener);
  }

  async listen({ signal, timeoutMs }: ListenOptions): Promise<Heard> {
    this.throwIfEnded(signal);
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const next = this.heard.shift()?.heard;
      if (next) return next;
      const left = deadline - performance.now();
      // At the deadline a turn or keypad entry already under way is still waited for.
      if (left <= 0 && !this.hearing.busy) return { kind: 'silence' };
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, Math.max(left, 20));
        const callSignal = this.o.signal;
        const onAbort = (): void => done();
        signal.addEventListener('abort', onAbort, { once: true });
        callSignal.addEventListener('abort', onAbort, { once: true });
        this.wake = done;
        function done(): void {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          callSignal.removeEventListener('abort', onAbort);
          resolve();
        }
      });
      this.wake = undefined;
      this.throwIfEnded(signal);
    }
  }

  /** Start logic "Wait for User Greeting": returns after the caller's first turn (or `maxMs`), dropping it. */
  async waitForGreeting(maxMs: number, signal: AbortSignal): Promise<boolean> {
    const heard = await this.listen({ signal, timeoutMs: maxMs });
    return heard.kind !== 'silence';
  }

  async transfer(target: string, bridgeMessage: string, signal: AbortSignal): Promise<TransferResult> {
    this.throwIfEnded(signal);
    if (!this.o.transfer) return { ok: false, reason: 'transfer is not available on this call' };
    const result = await this.o.transfer(target, bridgeMessage, signal);
    // Handed over (bridged or referred): the agent stops listening, so no recogniser runs on a
    // conversation it is no longer part of; the bridge reads the call audio on its own.
    if (result.ok) {
      this.handedOver = true;
      this.hearing.stop();
    }
    return result;
  }

  async hangup(): Promise<void> {
    if (this.ended) return;
    this.end();
    await this.o.hangup?.();
  }

  // ---- hearing hooks: the turn-taking policy ----

  onTurnStart(turn: CallerTurn): void {
    this.o.onTurnEvent?.('callerStarted', performance.now());
    this.o.onCallerSpeech?.();
    const during = this.speaker.current;
    const note: TurnNote = { during, interrupted: false };
    this.notes.set(turn.id, note);
    const settings = this.o.turn ?? {};
    // Without Smart Interruption any speech interrupts at once (barge-in within ~100 ms of onset).
    if (during?.bargeIn && !settings.smartInterruption && !settings.cautionOnNoisyLines) this.cutOff(note);
  }

  onTurnAudio(turn: CallerTurn): void {
    const note = this.notes.get(turn.id);
    const line = this.speaker.current;
    if (!note || note.interrupted || !line || line !== note.during || !line.bargeIn) return;
    const backchannel = BACKCHANNEL.test(turn.partial.trim());
    if (turn.voicedMs >= this.sustainedMs && (!backchannel || turn.voicedMs >= 2 * this.sustainedMs)) this.cutOff(note);
  }

  /** The caller's turn stops the agent; the turn then ends after a short pause (`hurryEndpoint`). */
  private cutOff(note: TurnNote): void {
    note.interrupted = true;
    this.speaker.interrupt();
    this.hearing.hurryEndpoint();
  }

  onTurnEnd(): void {
    this.o.onTurnEvent?.('callerEnded', performance.now());
  }

  onRecognition(turn: CallerTurn, { text, confidence, alternatives, meaning }: Recognition): void {
    const note = this.notes.get(turn.id);
    this.notes.delete(turn.id);
    if (this.ended) return;
    const during = note?.during;
    if (turn.id < this.listeningFrom) {
      if (text) this.ignore(text, 'notListening', turn.id);
    } else if (text && during && !during.bargeIn) this.ignore(text, 'bargeInDisabled', turn.id);
    else if (text && during && !note.interrupted && this.speaker.current === during) this.ignore(text, 'backchannel', turn.id);
    else if (text && during && !note.interrupted && BACKCHANNEL.test(text)) this.ignore(text, 'backchannel', turn.id);
    else if (text) this.deliver({ kind: 'utterance', text, ...(confidence !== undefined ? { confidence } : {}), ...(alternatives ? { alternatives } : {}), ...(meaning !== undefined ? { meaning } : {}) }, turn.id);
    // Speech without words we could use: the caller said something (or cut the agent off), so the
    // block must answer now ("Sorry, ...") instead of waiting out the silence timeout.
    else if (note?.interrupted || (!during && turn.voicedMs >= UNINTELLIGIBLE_MS)) this.deliver({ kind: 'utterance', text: '', confidence: 0 }, turn.id);
    this.wake?.();
  }

  onKey(): void {
    if (this.speaker.current?.bargeIn) this.speaker.interrupt();
  }

  onKeypadEntry(digits: string): void {
    // A terminator pressed alone is no answer; the block's silence handling applies.
    if (digits) this.deliver({ kind: 'dtmf', digits });
  }

  // ----

  private deliver(heard: Heard, turn = this.hearing.nextTurnId): void {
    if (this.ended) return;
    this.heard.push({ heard, turn });
    this.wake?.();
  }

  private ignore(text: string, why: IgnoredWhy, turn?: number): void {
    this.o.onIgnoredUtterance?.(text, why);
    for (const listener of this.ignoredListeners) listener(text, why, turn);
  }

  private throwIfEnded(signal?: AbortSignal): void {
    if (this.ended || this.o.signal.aborted || signal?.aborted) throw new CallEndedError();
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    this.speaker.silence();
    this.hearing.stop();
    this.wake?.();
  }
}

async function* toAsync<T>(items: readonly T[]): AsyncIterable<T> {
  yield* items;
}
