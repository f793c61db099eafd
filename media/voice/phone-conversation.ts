import { silentLogger, type Logger } from '../../core/logger.js';
import { CallEndedError, type Conversation, type Heard, type ListenOptions, type SayOptions, type SayResult, type TransferResult } from '../../core/ports/conversation.js';
import type { AudioFrame, CallMediaSession, MediaDtmfEvent } from '../../core/ports/media.js';
import { normaliseForSpeech } from '../speech/normalise.js';
import type { PronunciationLexicon } from '../speech/pronunciation.js';
import type { SttProvider, SttStream, TtsProvider } from '../speech/speech-provider.js';
import { sentencesOf, splitSentences, unspokenWords } from './sentences.js';
import { Endpointer, EnergyVad } from './vad.js';

export interface SpeechSettings {
  /** TTS voice (speech profile "Voice Name") and language. */
  readonly voice: string;
  readonly language: string;
  /** Speech profile name, for profile-scoped pronunciation words. */
  readonly profileName?: string;
  /** Phone number "Language" for STT. */
  readonly sttLanguage: string;
  /** Phone number "Boosted Keywords". */
  readonly keywords: readonly string[];
}

export interface TurnSettings {
  /** Silence that ends a caller turn (endpointing). Default 700 ms. */
  readonly endpointSilenceMs?: number;
  /** Voiced time that starts a caller turn. Default 60 ms. */
  readonly speechStartMs?: number;
  /** Recipe "Smart Interruption": only sustained speech, not a backchannel, interrupts. */
  readonly smartInterruption?: boolean;
  /** Recipe "Caution on noisy lines": wait for clear sustained speech. */
  readonly cautionOnNoisyLines?: boolean;
  /** Sustained speech that counts as an interruption under Smart Interruption. Default 500 ms (900 ms with caution). */
  readonly sustainedSpeechMs?: number;
}

export interface PhoneConversationOptions {
  readonly media: CallMediaSession;
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
  /** Caller words that do not drive the flow: said during a no-barge-in line, or a backchannel. */
  readonly onIgnoredUtterance?: (text: string, why: 'bargeInDisabled' | 'backchannel') => void;
  /** Turn-taking moments as they happen (metrics, latency measurement). */
  readonly onTurnEvent?: (event: 'callerStarted' | 'callerEnded' | 'bargeIn', at: number) => void;
  readonly logger?: Logger;
}

/** Short acknowledgements that are not an attempt to take the turn (Smart Interruption). */
const BACKCHANNEL = /^(mm+[- ]?h?mm+|m+|uh[- ]?huh|ok(ay)?|yeah|yes|yep|right|sure|hmm+|haan|ji|acha|achha|hm+)[.!,]*$/i;

interface Speaking {
  readonly bargeIn: boolean;
  readonly stop: AbortController;
  interrupted: boolean;
  /** Set by the ear when the caller started while this line played. */
  callerDuring: boolean;
}

interface Utterance {
  stream: Promise<SttStream | undefined>;
  /** What the agent was doing when the caller started. */
  readonly during: Speaking | undefined;
  interrupted: boolean;
  /** Latest partial transcript (streaming STT only): a backchannel so far does not interrupt. */
  partial: string;
}

/**
 * The voice pipeline's `Conversation`: caller audio -> VAD/endpointing -> STT -> the recipe
 * runtime's listen(); say() -> normalisation + pronunciation -> streaming TTS -> call audio,
 * with barge-in. One "ear" loop reads the call's audio for the whole call, so speech is heard
 * (and transcribed) whether the recipe is listening, speaking or thinking.
 */
export class PhoneConversation implements Conversation {
  private readonly heard: Heard[] = [];
  private wake: (() => void) | undefined;
  private speaking: Speaking | undefined;
  private current: Utterance | undefined;
  private pendingFinals = 0;
  private finals: Promise<void> = Promise.resolve();
  private readonly vad: EnergyVad;
  private readonly endpointer: Endpointer;
  private readonly preRoll: Int16Array[] = [];
  private readonly sustainedFrames: number;
  private readonly logger: Logger;
  private readonly frameTaps = new Set<(samples: Int16Array) => void>();
  private ended = false;
  /** The ear's reader of the call audio (its own queue: a bridge reads with another). */
  private earReader: AsyncIterator<AudioFrame> | undefined;
  /** A transfer took the call: the ear stopped, but the call (and its output) goes on. */
  private handedOver = false;
  /** Closes when the ear loop has stopped (call over). */
  readonly done: Promise<void>;

  constructor(private readonly o: PhoneConversationOptions) {
    const turn = o.turn ?? {};
    this.logger = o.logger ?? silentLogger;
    this.vad = new EnergyVad(turn.cautionOnNoisyLines ? { marginDb: 15, minLevelDb: -36 } : {});
    this.endpointer = new Endpointer({ silenceMs: turn.endpointSilenceMs ?? 700, startMs: turn.speechStartMs ?? (turn.cautionOnNoisyLines ? 120 : 60) });
    this.sustainedFrames = Math.round((turn.sustainedSpeechMs ?? (turn.cautionOnNoisyLines ? 900 : 500)) / 20);
    const onDtmf = (e: MediaDtmfEvent): void => this.deliver({ kind: 'dtmf', digits: e.digit });
    o.media.on('dtmf', onDtmf);
    o.signal.addEventListener('abort', () => this.end(), { once: true });
    this.done = this.ear().finally(() => {
      o.media.off('dtmf', onDtmf);
      // After a hand-over the bridge owns the call's output: ending must not clear it.
      if (!this.handedOver) this.end();
    });
  }

  /** Every caller frame, for detectors that run beside the conversation (voicemail, beep). */
  tap(listener: (samples: Int16Array) => void): () => void {
    this.frameTaps.add(listener);
    return () => this.frameTaps.delete(listener);
  }

  async say(text: string, options: SayOptions): Promise<SayResult> {
    const result = await this.speak(toAsync(splitSentences(text)), options);
    return { interrupted: result.interrupted, ...(result.unspoken !== undefined ? { unspoken: result.unspoken } : {}) };
  }

  async sayStream(pieces: AsyncIterable<string>, options: SayOptions): Promise<SayResult & { text: string }> {
    return this.speak(sentencesOf(pieces), options);
  }

  async listen({ signal, timeoutMs }: ListenOptions): Promise<Heard> {
    this.throwIfEnded(signal);
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const next = this.heard.shift();
      if (next) return next;
      const left = deadline - performance.now();
      // At the deadline a turn already under way (or being transcribed) is still waited for.
      if (left <= 0 && !this.endpointer.inSpeech && this.pendingFinals === 0) return { kind: 'silence' };
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
      this.stopHearing();
    }
    return result;
  }

  private stopHearing(): void {
    const reader = this.earReader;
    this.earReader = undefined;
    void reader?.return?.();
  }

  async hangup(): Promise<void> {
    if (this.ended) return;
    this.end();
    await this.o.hangup?.();
  }

  private throwIfEnded(signal?: AbortSignal): void {
    if (this.ended || this.o.signal.aborted || signal?.aborted) throw new CallEndedError();
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    this.speaking?.stop.abort();
    this.o.media.output.clear();
    void this.current?.stream.then((s) => s?.abort());
    this.wake?.();
  }

  private deliver(heard: Heard): void {
    if (this.ended) return;
    const last = this.heard[this.heard.length - 1];
    if (heard.kind === 'dtmf' && last?.kind === 'dtmf') this.heard[this.heard.length - 1] = { kind: 'dtmf', digits: last.digits + heard.digits };
    else this.heard.push(heard);
    if (heard.kind === 'dtmf' && this.speaking?.bargeIn) this.interrupt();
    this.wake?.();
  }

  // ---- speaking ----

  private async speak(sentences: AsyncIterable<string>, { bargeIn, signal, speechNormalization }: SayOptions): Promise<SayResult & { text: string }> {
    this.throwIfEnded(signal);
    const stop = new AbortController();
    const onAbort = (): void => stop.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    this.o.signal.addEventListener('abort', onAbort, { once: true });
    const speaking: Speaking = { bargeIn, stop, interrupted: false, callerDuring: false };
    this.speaking = speaking;
    const spoken: { text: string; start: number; end: number; complete: boolean }[] = [];
    let written = 0;
    const { tts, speech, lexicon } = this.o;
    const media = this.o.media;
    // One iterator shared by the audio generator and the unspoken-text collector: play() closing
    // the generator on barge-in must not close the source of the sentences not yet spoken.
    const source = sentences[Symbol.asyncIterator]();
    async function* audio(): AsyncIterable<Int16Array> {
      for (;;) {
        if (stop.signal.aborted) return;
        const next = await source.next();
        if (next.done) return;
        const entry = { text: next.value, start: written, end: written, complete: false };
        spoken.push(entry);
        let prepared = normaliseForSpeech(next.value, speech.language, speechNormalization);
        if (lexicon) prepared = lexicon.apply(prepared, speech.profileName);
        for await (const chunk of tts.synthesize({ text: prepared, voice: speech.voice, language: speech.language, signal: stop.signal })) {
          if (stop.signal.aborted) return;
          written += chunk.length;
          entry.end = written;
          yield chunk;
        }
        entry.complete = true;
      }
    }
    let queuedAtStop = 0;
    const onStop = (): void => {
      queuedAtStop = Math.round(media.output.queuedMs * 8);
    };
    stop.signal.addEventListener('abort', onStop, { once: true });
    try {
      const outcome = await media.output.play(audio(), stop.signal);
      this.throwIfEnded(signal);
      const text = spoken.map((s) => s.text).join(' ');
      if (outcome === 'completed' && !speaking.interrupted) return { interrupted: false, text };
      // Where the caller cut in: samples actually sent, mapped to sentence and word.
      const played = Math.max(0, written - queuedAtStop);
      const rest: string[] = [];
      for (const s of spoken) {
        if (played >= s.end && s.complete) continue;
        if (played <= s.start) rest.push(s.text);
        else rest.push(unspokenWords(s.text, (played - s.start) / Math.max(1, s.complete ? s.end - s.start : estimateSamples(s.text))));
      }
      // Sentences never pulled (the model may still be streaming them) are unspoken too, and part
      // of the line the transcript keeps.
      const later: string[] = [];
      if (!this.ended) for (let next = await source.next(); !next.done; next = await source.next()) later.push(next.value);
      return { interrupted: true, unspoken: [...rest, ...later].filter(Boolean).join(' '), text: [text, ...later].filter(Boolean).join(' ') };
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.o.signal.removeEventListener('abort', onAbort);
      if (this.speaking === speaking) this.speaking = undefined;
    }
  }

  /** Barge-in: agent audio stops now (queue cleared), synthesis is cancelled. */
  private interrupt(): void {
    const s = this.speaking;
    if (!s || s.interrupted) return;
    s.interrupted = true;
    this.o.onTurnEvent?.('bargeIn', performance.now());
    s.stop.abort();
    this.o.media.output.clear();
    this.logger.debug('barge-in: agent audio stopped');
  }

  // ---- hearing ----

  private async ear(): Promise<void> {
    const reader = this.o.media.input[Symbol.asyncIterator]();
    this.earReader = reader;
    try {
      for (let next = await reader.next(); !next.done && !this.ended && this.earReader; next = await reader.next()) {
        this.onFrame(next.value.samples);
      }
    } catch (error) {
      this.logger.warn({ err: error }, 'caller audio stopped');
    } finally {
      if (this.earReader) this.stopHearing();
    }
  }

  private onFrame(samples: Int16Array): void {
    for (const tap of this.frameTaps) tap(samples);
    const { voiced } = this.vad.classify(samples);
    const event = this.endpointer.feed(voiced);
    const u = this.current;
    if (event === 'start') {
      this.preRoll.push(samples.slice());
      this.startUtterance();
      return;
    }
    if (!u) {
      this.preRoll.push(samples.slice());
      if (this.preRoll.length > this.endpointer.startFrames + 5) this.preRoll.shift();
      return;
    }
    const copy = samples.slice();
    void u.stream.then((s) => s?.push(copy));
    const s = this.speaking;
    const frames = this.endpointer.voicedFrames;
    const sustained = frames >= this.sustainedFrames && (!BACKCHANNEL.test(u.partial.trim()) || frames >= 2 * this.sustainedFrames);
    if (s && s === u.during && s.bargeIn && !u.interrupted && sustained) {
      u.interrupted = true;
      this.interrupt();
    }
    if (event === 'end') this.endUtterance(u);
  }

  private startUtterance(): void {
    this.o.onTurnEvent?.('callerStarted', performance.now());
    this.o.onCallerSpeech?.();
    const during = this.speaking;
    const turn = this.o.turn ?? {};
    const stream = this.o.stt
      .open({ language: this.o.speech.sttLanguage, keywords: this.o.speech.keywords, signal: this.o.signal })
      .catch((error: unknown) => {
        this.logger.warn({ err: error }, 'speech-to-text could not start');
        return undefined;
      });
    const pre = this.preRoll.splice(0);
    const u: Utterance = { stream, during, interrupted: false, partial: '' };
    void stream.then((s) => {
      s?.onTranscript((t) => (u.partial = t.text));
      pre.forEach((p) => s?.push(p));
    });
    this.current = u;
    if (during) during.callerDuring = true;
    // Without Smart Interruption any speech interrupts at once (barge-in within ~100 ms of onset).
    if (during?.bargeIn && !turn.smartInterruption && !turn.cautionOnNoisyLines) {
      u.interrupted = true;
      this.interrupt();
    }
  }

  private endUtterance(u: Utterance): void {
    this.o.onTurnEvent?.('callerEnded', performance.now());
    this.current = undefined;
    this.pendingFinals++;
    this.finals = this.finals.then(async () => {
      let text = '';
      try {
        const s = await u.stream;
        text = s ? (await s.finish()).trim() : '';
      } catch (error) {
        this.logger.warn({ err: error }, 'speech-to-text failed for a caller turn');
      } finally {
        this.pendingFinals--;
      }
      if (this.ended) return;
      const during = u.during;
      if (text && during && !during.bargeIn) this.o.onIgnoredUtterance?.(text, 'bargeInDisabled');
      else if (text && during && !u.interrupted && this.speaking === during) this.o.onIgnoredUtterance?.(text, 'backchannel');
      else if (text && during && !u.interrupted && BACKCHANNEL.test(text)) this.o.onIgnoredUtterance?.(text, 'backchannel');
      else if (text) this.deliver({ kind: 'utterance', text });
      this.wake?.();
    });
  }
}

async function* toAsync<T>(items: readonly T[]): AsyncIterable<T> {
  yield* items;
}

/** About 14 characters per second of speech, at 8 kHz. */
function estimateSamples(text: string): number {
  return Math.max(1, (text.length / 14) * 8000);
}
