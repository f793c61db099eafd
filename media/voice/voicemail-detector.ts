import { BeepDetector } from './beep-detector.js';
import { HighPassFilter } from './high-pass.js';
import { EnergyVad } from './vad.js';

export { BeepDetector } from './beep-detector.js';

/**
 * Answering-machine detection from the callee's first seconds of audio (a 200 OK looks the same
 * for a person and a machine). Not a length rule on the first phrase: voicemail greetings that
 * open with a short phrase and a pause ("Hello, [pause] you have reached ...", "Hi, this is Sam.
 * [pause] I can't ...") look exactly like a person's "Hello?" until the pause ends. So the
 * detector keeps listening through the first pause and decides on what follows it:
 *
 * - a beep (a steady tone held `beepMs`, BeepDetector) anywhere: machine (this also catches
 *   beep-only machines);
 * - silence of `humanPauseMs` after speech: a person who answered and now waits for us (a
 *   machine's pauses between phrases are shorter: it resumes);
 * - speech whose span from its first onset, pauses shorter than `humanPauseMs` included, reaches
 *   `machineSpanMs`: a greeting being read on. The span is longer than the longest way people
 *   answer ("Hi, this is Priya from the accounts team. How can I help you?" runs 3.8-4.2 s and
 *   then waits): until it is reached, a long opening can still end in a question and a wait, and
 *   nothing in the audio tells it from a greeting (docs/voice-pipeline.md, Voicemail);
 * - nothing heard (no speech, no tone) for `silenceMs`: `unknown` (a silent listener, or a line
 *   without audio).
 *
 * Once speech has begun one of the first two always fires, by onset + span + pause at the latest.
 * `unknown` is treated like a person by the call: hanging up on a person (or leaving them a
 * voicemail message) is worse than talking to a machine for a while. Thresholds and the figures
 * behind them: docs/voice-pipeline.md, Voicemail.
 */
export interface AmdOptions {
  /** Silence this long after speech means a person waiting for us. Default 1000 ms. */
  readonly humanPauseMs?: number;
  /** Speech spanning this long from its onset (shorter pauses included) is a greeting. Default 4500 ms. */
  readonly machineSpanMs?: number;
  /** A tone held this long is a voicemail beep. Default 200 ms. */
  readonly beepMs?: number;
  /** Gaps shorter than this are between words: they do not end a speech segment. Default 300 ms. */
  readonly wordGapMs?: number;
  /** Nothing heard (no speech, no tone) for this long: unknown. Default 5000 ms. */
  readonly silenceMs?: number;
}

export type AmdVerdict = 'human' | 'machine' | 'unknown';

/** Which rule decided (logs, metrics, the bench's table). */
export type AmdReason = 'beep' | 'greeting-span' | 'waiting-after-answer' | 'silence' | 'call-ended';

export interface AmdDecision {
  readonly verdict: AmdVerdict;
  readonly reason: AmdReason;
  /** Caller audio heard until the verdict (20 ms frames since the detector started, at answer). */
  readonly afterMs: number;
}

const FRAME_MS = 20;
/** Voiced frames (leaky count) that open a speech segment: a click or a noise burst does not. */
const ONSET_FRAMES = 3;

interface Segment {
  readonly startMs: number;
  endMs: number;
}

/** A tonal run shorter than this inside speech is a held vowel, still speech (BeepDetector). */
const SPEECH_TONE_MS = 160;

/** Below this the detector's VAD hears no voice (see HighPassFilter). */
const VOICE_LOW_HZ = 250;

export class AnsweringMachineDetector {
  private readonly vad = new EnergyVad();
  private readonly highPass = new HighPassFilter(VOICE_LOW_HZ);
  private readonly beep = new BeepDetector();
  private readonly o: Required<AmdOptions>;
  private elapsed = 0;
  private leaky = 0;
  private readonly segments: Segment[] = [];
  private open: Segment | undefined;
  private decided: AmdDecision | undefined;

  constructor(options: AmdOptions = {}) {
    this.o = { humanPauseMs: 1000, machineSpanMs: 4500, beepMs: 200, wordGapMs: 300, silenceMs: 5000, ...options };
  }

  /** Caller audio heard so far. */
  get heardMs(): number {
    return this.elapsed;
  }

  /** Whether the callee has said anything yet (a speech segment opened). */
  get heardSpeech(): boolean {
    return this.segments.length > 0;
  }

  /** Feeds one 20 ms frame; returns the decision once it is made (and the same one after). */
  feed(samples: Int16Array): AmdDecision | undefined {
    if (this.decided) return this.decided;
    this.elapsed += FRAME_MS;
    this.beep.feed(samples);
    if (this.beep.toneMs >= this.o.beepMs) return this.decide('machine', 'beep');
    // A tone is not speech: it must not stretch the greeting span while it is being confirmed.
    // Held vowels make tonal runs of up to ~140 ms inside speech: those stay speech.
    const voiced = this.vad.classify(this.highPass.process(samples)).voiced && this.beep.toneMs < SPEECH_TONE_MS;
    this.track(voiced);
    return this.rules();
  }

  private track(voiced: boolean): void {
    const now = this.elapsed;
    if (this.open) {
      if (voiced) this.open.endMs = now;
      else if (now - this.open.endMs >= this.o.wordGapMs) this.open = undefined;
      return;
    }
    this.leaky = voiced ? this.leaky + 1 : Math.max(0, this.leaky - 1);
    if (this.leaky >= ONSET_FRAMES) {
      this.leaky = 0;
      this.open = { startMs: now - (ONSET_FRAMES - 1) * FRAME_MS - FRAME_MS, endMs: now };
      this.segments.push(this.open);
    }
  }

  private rules(): AmdDecision | undefined {
    const now = this.elapsed;
    const first = this.segments[0];
    if (!first) return now >= this.o.silenceMs ? this.decide('unknown', 'silence') : undefined;
    const last = this.segments[this.segments.length - 1]!;
    if (!this.open && now - last.endMs >= this.o.humanPauseMs) return this.decide('human', 'waiting-after-answer');
    // The span counts pauses shorter than humanPauseMs as part of the greeting: a machine's
    // "Hello, [pause] you have reached" is one stretch of talk, a person's "Hello?" is not.
    if (last.endMs - first.startMs >= this.o.machineSpanMs) return this.decide('machine', 'greeting-span');
    return undefined;
  }

  private decide(verdict: AmdVerdict, reason: AmdReason): AmdDecision {
    this.decided = { verdict, reason, afterMs: this.elapsed };
    return this.decided;
  }
}

export interface GreetingEndOptions {
  /** Silence after the greeting that ends it when no beep comes. Default 2500 ms. */
  readonly endSilenceMs?: number;
}

/**
 * When a machine is ready to record: at the end of its beep, or, for machines without a beep,
 * once its greeting has been followed by `endSilenceMs` of silence (longer than the pauses
 * inside a greeting). Fed from answer, so a beep that started before the verdict (beep-only
 * machines) is still seen to its end.
 */
export class GreetingEndWatch {
  private readonly vad = new EnergyVad();
  private readonly highPass = new HighPassFilter(VOICE_LOW_HZ);
  private readonly beep = new BeepDetector();
  private elapsed = 0;
  private lastVoicedMs = -1;
  private beepEndedMs = -1;
  private readonly endSilenceMs: number;

  constructor(options: GreetingEndOptions = {}) {
    this.endSilenceMs = options.endSilenceMs ?? 2500;
  }

  get heardMs(): number {
    return this.elapsed;
  }

  feed(samples: Int16Array): void {
    this.elapsed += FRAME_MS;
    if (this.beep.feed(samples)) this.beepEndedMs = this.elapsed;
    if (this.vad.classify(this.highPass.process(samples)).voiced && this.beep.toneMs === 0) this.lastVoicedMs = this.elapsed;
  }

  /** 'beep': a beep ended after the last speech; 'silence': the greeting is over without one. */
  get state(): 'beep' | 'silence' | undefined {
    // The beep's own frames may read as voiced until it is recognised: allow them.
    if (this.beepEndedMs >= 0 && this.beepEndedMs >= this.lastVoicedMs) return 'beep';
    if (this.lastVoicedMs >= 0 && this.elapsed - this.lastVoicedMs >= this.endSilenceMs) return 'silence';
    return undefined;
  }
}
