/**
 * Voice activity detection per 20 ms frame: energy above an adaptive noise floor plus a
 * zero-crossing-rate check (broadband hiss crosses zero far more often than voiced speech).
 * Chosen over Silero (onnxruntime) for cost: it runs on every frame of every call (its cost is
 * measured by bench/voice-turn.ts); its weakness, loud non-speech such as music, is handled by
 * the sustained-speech rules above it (smart interruption, noisy-line caution).
 */
export interface VadOptions {
  /** Absolute floor: quieter frames are never speech (dBFS). Default -42. */
  readonly minLevelDb?: number;
  /** Speech must be this far above the tracked noise floor (dB). Default 9; noisy-line caution raises it. */
  readonly marginDb?: number;
  /** Frames with a zero-crossing rate above this are noise, not voice. Default 0.35 (white noise sits near 0.5). */
  readonly maxZeroCrossingRate?: number;
}

export interface VadFrame {
  readonly voiced: boolean;
  readonly levelDb: number;
}

export function frameLevelDb(samples: Int16Array): number {
  let sum = 0;
  for (let i = 0; i < samples.length; i++) sum += samples[i]! * samples[i]!;
  const mean = sum / Math.max(1, samples.length);
  return mean === 0 ? -120 : 10 * Math.log10(mean / (32768 * 32768));
}

export class EnergyVad {
  private noiseDb = -70;
  private readonly minLevelDb: number;
  private readonly marginDb: number;
  private readonly maxZcr: number;

  constructor(options: VadOptions = {}) {
    this.minLevelDb = options.minLevelDb ?? -42;
    this.marginDb = options.marginDb ?? 9;
    this.maxZcr = options.maxZeroCrossingRate ?? 0.35;
  }

  get noiseFloorDb(): number {
    return this.noiseDb;
  }

  classify(samples: Int16Array): VadFrame {
    const levelDb = frameLevelDb(samples);
    let crossings = 0;
    for (let i = 1; i < samples.length; i++) if ((samples[i - 1]! >= 0) !== (samples[i]! >= 0)) crossings++;
    const zcr = crossings / Math.max(1, samples.length - 1);
    const voiced = levelDb > this.minLevelDb && levelDb > this.noiseDb + this.marginDb && zcr < this.maxZcr;
    // Noise floor: falls fast to quieter frames, rises slowly (about 1 dB per second) so a long
    // sentence does not become the new floor but a line that gets noisier is learnt.
    if (levelDb < this.noiseDb) this.noiseDb = levelDb;
    else if (!voiced) this.noiseDb += Math.min(levelDb - this.noiseDb, 0.5);
    else this.noiseDb += 0.02;
    return { voiced, levelDb };
  }
}

export interface EndpointerOptions {
  /** Voiced time within the start window that opens an utterance (ms). Default 60. */
  readonly startMs?: number;
  /** Silence that ends an utterance (ms). Default 700. */
  readonly silenceMs?: number;
}

export type EndpointEvent = 'start' | 'end' | undefined;

/** Turns per-frame voicing into utterance start/end events (20 ms frames). */
export class Endpointer {
  readonly startFrames: number;
  readonly silenceFrames: number;
  private recent = 0;
  private speaking = false;
  private quiet = 0;
  /** Silence that ends the current utterance (shortened by `hurry`). */
  private endFrames: number;
  /** Voiced frames in the current utterance (sustained-speech rules read it). */
  voicedFrames = 0;

  constructor(options: EndpointerOptions = {}) {
    this.startFrames = Math.max(1, Math.round((options.startMs ?? 60) / 20));
    this.silenceFrames = Math.max(1, Math.round((options.silenceMs ?? 700) / 20));
    this.endFrames = this.silenceFrames;
  }

  /** Ends the current utterance after `silenceMs` of silence instead of the configured time. */
  hurry(silenceMs: number): void {
    if (this.speaking) this.endFrames = Math.min(this.endFrames, Math.max(1, Math.round(silenceMs / 20)));
  }

  get inSpeech(): boolean {
    return this.speaking;
  }

  feed(voiced: boolean): EndpointEvent {
    if (!this.speaking) {
      // Leaky count: isolated clicks decay, a syllable accumulates.
      this.recent = voiced ? this.recent + 1 : Math.max(0, this.recent - 1);
      if (this.recent >= this.startFrames) {
        this.speaking = true;
        this.quiet = 0;
        this.voicedFrames = this.recent;
        this.recent = 0;
        return 'start';
      }
      return undefined;
    }
    if (voiced) {
      this.voicedFrames++;
      this.quiet = 0;
      return undefined;
    }
    if (++this.quiet >= this.endFrames) {
      this.speaking = false;
      this.quiet = 0;
      this.endFrames = this.silenceFrames;
      return 'end';
    }
    return undefined;
  }

  reset(): void {
    this.endFrames = this.silenceFrames;
    this.speaking = false;
    this.recent = 0;
    this.quiet = 0;
    this.voicedFrames = 0;
  }
}
