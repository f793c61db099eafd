import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import { defaultDtmfCollection, type Alternative, type ListenExpectation } from '../../core/ports/conversation.js';
import type { AudioFrame, CallMediaSession, MediaDtmfEvent } from '../../core/ports/media.js';
import type { SttProvider, SttStream } from '../speech/speech-provider.js';
import { DtmfCollector, type DtmfCompletion } from './dtmf-collector.js';
import { Endpointer, EnergyVad } from './vad.js';

/** Endpoint silence for a turn that interrupted the agent (see `hurryEndpoint`). */
const INTERRUPTION_ENDPOINT_MS = 400;

/** One caller turn as the ear sees it, from the VAD's start to the recogniser's final text. */
export interface CallerTurn {
  readonly id: number;
  /** Latest partial transcript (streaming STT only). */
  readonly partial: string;
  /** Voiced time so far (sustained-speech rules). */
  readonly voicedMs: number;
}

export interface Recognition {
  readonly text: string;
  /** Lowest confidence the recogniser reported for the turn's final text; undefined when it reports none. */
  readonly confidence?: number;
  /** Competing readings the recogniser reported (n-best), best first. */
  readonly alternatives?: readonly Alternative[];
  readonly meaning?: string;
}

/**
 * What hearing tells the turn-taking policy (the livekit-agents "recognition hooks" idea: the ear
 * knows nothing of speaking or of the flow; the conversation that joins both decides).
 */
export interface HearingHooks {
  onTurnStart(turn: CallerTurn): void;
  /** Every frame of a turn in progress, after the VAD (barge-in on sustained speech). */
  onTurnAudio(turn: CallerTurn): void;
  onTurnEnd(turn: CallerTurn): void;
  /** The recogniser's final text for a turn ('' when nothing was recognised), in turn order. */
  onRecognition(turn: CallerTurn, result: Recognition): void;
  /** A key went down (RFC 4733): barge-in does not wait for the whole entry. */
  onKey(digit: string): void;
  /** A keypad entry is complete (terminator, max digits or inter-digit timeout). */
  onKeypadEntry(digits: string, completion: DtmfCompletion): void;
}

export interface TurnDetection {
  /** Silence that ends a caller turn (endpointing). Default 700 ms. */
  readonly endpointSilenceMs?: number;
  /** Voiced time that starts a caller turn. Default 60 ms (120 ms with caution). */
  readonly speechStartMs?: number;
  /** Recipe "Caution on noisy lines": a higher VAD margin and a longer start. */
  readonly cautionOnNoisyLines?: boolean;
}

export interface HearingOptions {
  readonly media: CallMediaSession;
  /** The caller's audio when something already reads it from answer (EarlyAudio); else `media.input` from now. */
  readonly input?: AsyncIterator<AudioFrame>;
  readonly stt: SttProvider;
  /** Phone number "Language" and "Boosted Keywords". */
  readonly language: string;
  readonly keywords: readonly string[];
  readonly detection: TurnDetection;
  /** The call's signal: STT streams hang off it. */
  readonly signal: AbortSignal;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly hooks: HearingHooks;
}

interface OpenTurn extends CallerTurn {
  partial: string;
  voicedMs: number;
  readonly stream: Promise<SttStream | undefined>;
  confidence: number | undefined;
  alternatives: readonly Alternative[] | undefined;
  meaning: string | undefined;
}

/**
 * The voice pipeline's ear: reads the call audio for the whole call (so speech is heard and
 * transcribed whether the recipe is listening, speaking or thinking), runs VAD and endpointing,
 * one STT stream per caller turn shaped by what the current block expects, and collects key
 * presses into entries. It decides nothing about the flow: that is the hooks' business.
 */
export class Hearing {
  private readonly vad: EnergyVad;
  private readonly endpointer: Endpointer;
  private readonly preRoll: { readonly samples: Int16Array; readonly wideband?: Int16Array }[] = [];
  private readonly taps = new Set<(samples: Int16Array) => void>();
  private readonly keypad: DtmfCollector;
  private current: OpenTurn | undefined;
  private expectation: ListenExpectation | undefined;
  private finals: Promise<void> = Promise.resolve();
  private pending = 0;
  private nextId = 1;
  private reader: AsyncIterator<AudioFrame> | undefined;
  private stopped = false;
  /** Closes when the ear stops (call over, or handed over to a bridge). */
  readonly done: Promise<void>;

  constructor(private readonly o: HearingOptions) {
    const caution = o.detection.cautionOnNoisyLines ?? false;
    this.vad = new EnergyVad(caution ? { marginDb: 15, minLevelDb: -36 } : {});
    this.endpointer = new Endpointer({ silenceMs: o.detection.endpointSilenceMs ?? 700, startMs: o.detection.speechStartMs ?? (caution ? 120 : 60) });
    this.keypad = new DtmfCollector(defaultDtmfCollection, (digits, completion) => o.hooks.onKeypadEntry(digits, completion), o.clock);
    const onDtmf = (e: MediaDtmfEvent): void => {
      if (this.stopped || this.keypad.isLateTerminator(e.digit)) return;
      o.hooks.onKey(e.digit);
      this.keypad.press(e.digit);
    };
    o.media.on('dtmf', onDtmf);
    this.done = this.listenToCall().finally(() => {
      o.media.off('dtmf', onDtmf);
      this.keypad.stop();
    });
  }

  /** Shapes recognition for the block that now listens (grammar / keyterms, keypad rules). */
  expect(expectation: ListenExpectation): void {
    this.expectation = expectation;
    this.keypad.configure(expectation.dtmf ?? defaultDtmfCollection);
  }

  /** The id the next caller turn will get: turns below it started before now. */
  get nextTurnId(): number {
    return this.nextId;
  }

  /** Busy with the caller: a turn is under way, being transcribed, or keys are being entered. */
  get busy(): boolean {
    return this.endpointer.inSpeech || this.pending > 0 || this.keypad.collecting;
  }

  /**
   * The caller just cut the agent off: end this turn after a short pause. An interjection that
   * stops the agent is usually short ("okay", "wait", a cough) and the line is silent until it is
   * answered, so waiting out the full endpoint silence would be dead air.
   */
  hurryEndpoint(): void {
    this.endpointer.hurry(INTERRUPTION_ENDPOINT_MS);
  }

  /** Every caller frame, for detectors that run beside the conversation (voicemail, beep). */
  tap(listener: (samples: Int16Array) => void): () => void {
    this.taps.add(listener);
    return () => this.taps.delete(listener);
  }

  /** Stops reading the call audio (hand-over to a bridge, or the call ended); aborts the open STT stream. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.keypad.stop();
    void this.current?.stream.then((s) => s?.abort());
    const reader = this.reader;
    this.reader = undefined;
    void reader?.return?.();
  }

  private async listenToCall(): Promise<void> {
    const reader = this.o.input ?? this.o.media.input[Symbol.asyncIterator]();
    this.reader = reader;
    try {
      for (let next = await reader.next(); !next.done && !this.stopped; next = await reader.next()) this.onFrame(next.value.samples, next.value.wideband);
    } catch (error) {
      this.o.logger.warn({ err: error }, 'caller audio stopped');
    } finally {
      this.stop();
    }
  }

  /** `wideband`: the frame at 16 kHz on a G.722 call, for a recogniser that can hear the upper band. */
  private onFrame(samples: Int16Array, wideband?: Int16Array): void {
    for (const tap of this.taps) tap(samples);
    const { voiced } = this.vad.classify(samples);
    const event = this.endpointer.feed(voiced);
    const copy = { samples: samples.slice(), ...(wideband ? { wideband: wideband.slice() } : {}) };
    if (event === 'start') {
      this.preRoll.push(copy);
      this.startTurn();
      return;
    }
    const turn = this.current;
    if (!turn) {
      this.preRoll.push(copy);
      if (this.preRoll.length > this.endpointer.startFrames + 5) this.preRoll.shift();
      return;
    }
    void turn.stream.then((s) => s?.push(copy.samples, copy.wideband));
    turn.voicedMs = this.endpointer.voicedFrames * 20;
    this.o.hooks.onTurnAudio(turn);
    if (event === 'end') this.endTurn(turn);
  }

  private startTurn(): void {
    const expected = this.expectation;
    const stream = this.o.stt
      .open({
        language: this.o.language,
        keywords: this.o.keywords,
        // What the recogniser can use of the expectation (the keypad rules stay here).
        ...(expected ? { expectation: recogniserExpectation(expected) } : {}),
        signal: this.o.signal,
      })
      .catch((error: unknown) => {
        this.o.logger.warn({ err: error }, 'speech-to-text could not start');
        return undefined;
      });
    const pre = this.preRoll.splice(0);
    const turn: OpenTurn = { id: this.nextId++, partial: '', voicedMs: this.endpointer.voicedFrames * 20, stream, confidence: undefined, alternatives: undefined, meaning: undefined };
    void stream.then((s) => {
      s?.onTranscript((t) => {
        turn.partial = t.text;
        if (t.final && t.confidence !== undefined) turn.confidence = Math.min(turn.confidence ?? 1, t.confidence);
        if (t.final && t.alternatives?.length) turn.alternatives = t.alternatives;
        if (t.final && t.meaning !== undefined) turn.meaning = t.meaning;
      });
      pre.forEach((p) => s?.push(p.samples, p.wideband));
    });
    this.current = turn;
    this.o.hooks.onTurnStart(turn);
  }

  private endTurn(turn: OpenTurn): void {
    this.o.hooks.onTurnEnd(turn);
    this.current = undefined;
    this.pending++;
    // Finals are delivered in turn order even when a later turn's recogniser is faster.
    this.finals = this.finals.then(async () => {
      let text = '';
      try {
        const s = await turn.stream;
        text = s ? (await s.finish()).trim() : '';
      } catch (error) {
        this.o.logger.warn({ err: error }, 'speech-to-text failed for a caller turn');
      } finally {
        this.pending--;
      }
      if (this.stopped) return;
      // Lengths, not words: what a caller says stays out of the logs.
      this.o.logger.debug({ turn: turn.id, voicedMs: turn.voicedMs, chars: text.length, confidence: turn.confidence }, 'caller turn recognised');
      this.o.hooks.onRecognition(turn, {
        text,
        ...(text && turn.confidence !== undefined ? { confidence: turn.confidence } : {}),
        ...(text && turn.alternatives ? { alternatives: turn.alternatives } : {}),
        ...(text && turn.meaning !== undefined ? { meaning: turn.meaning } : {}),
      });
    });
  }
}

/** What the recogniser can use of a block's expectation: all of it but the keypad rules, which stay with the ear. */
function recogniserExpectation(expected: ListenExpectation): Omit<ListenExpectation, 'dtmf'> {
  const { dtmf: _keypad, ...heard } = expected;
  return heard;
}
