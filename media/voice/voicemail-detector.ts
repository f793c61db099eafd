import { EnergyVad } from './vad.js';

/**
 * Answering-machine detection from audio (a 200 OK looks the same for a person and a machine).
 * The classic cues: a person answers with a short greeting ("Hello?") and then waits; a machine
 * talks on ("Hi, you have reached ... please leave a message") without leaving a gap.
 */
export interface AmdOptions {
  /** Continuous greeting longer than this is a machine. Default 2400 ms. */
  readonly machineGreetingMs?: number;
  /** A pause this long after a short greeting means a person is waiting for us. Default 700 ms. */
  readonly humanPauseMs?: number;
  /** Gaps shorter than this inside a greeting are between words, not a pause. Default 350 ms. */
  readonly wordGapMs?: number;
  /** Nobody spoke for this long: treat as a person who is listening. Default 4000 ms. */
  readonly initialSilenceMs?: number;
}

export type AmdVerdict = 'human' | 'machine';

export class AnsweringMachineDetector {
  private readonly vad = new EnergyVad();
  private elapsed = 0;
  private speechMs = 0;
  private pauseMs = 0;
  private started = false;
  private readonly o: Required<AmdOptions>;

  constructor(options: AmdOptions = {}) {
    this.o = { machineGreetingMs: 2400, humanPauseMs: 700, wordGapMs: 350, initialSilenceMs: 4000, ...options };
  }

  /** Feeds one 20 ms frame; returns the verdict once it is known. */
  feed(samples: Int16Array): AmdVerdict | undefined {
    this.elapsed += 20;
    const { voiced } = this.vad.classify(samples);
    if (!this.started) {
      if (voiced) this.started = true;
      else return this.elapsed >= this.o.initialSilenceMs ? 'human' : undefined;
    }
    if (voiced) {
      this.speechMs += 20 + (this.pauseMs < this.o.wordGapMs ? this.pauseMs : 0);
      this.pauseMs = 0;
      if (this.speechMs >= this.o.machineGreetingMs) return 'machine';
      return undefined;
    }
    this.pauseMs += 20;
    if (this.pauseMs >= this.o.humanPauseMs) return 'human';
    return undefined;
  }
}

const TONE_LOW_HZ = 350;
const TONE_HIGH_HZ = 2500;
const TONE_STEP_HZ = 25;

/** Share of a frame's energy at one frequency (Goertzel), 1.0 for a pure tone on the bin. */
function tonality(samples: Int16Array, hz: number): number {
  const n = samples.length;
  const k = (2 * Math.PI * hz) / 8000;
  const coeff = 2 * Math.cos(k);
  let s1 = 0;
  let s2 = 0;
  let energy = 0;
  for (let i = 0; i < n; i++) {
    const x = samples[i]!;
    energy += x * x;
    const s0 = x + coeff * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  if (energy === 0) return 0;
  const power = s1 * s1 + s2 * s2 - coeff * s1 * s2;
  return power / ((n / 2) * energy);
}

/**
 * The voicemail beep: a steady single tone (any pitch in 350-2500 Hz, as machines differ) of at
 * least `minMs`, reported when it ends so the message starts after it, not over it.
 */
export class BeepDetector {
  private toneHz = 0;
  private toneMs = 0;

  constructor(private readonly options: { readonly minMs?: number; readonly minLevelDb?: number } = {}) {}

  /** True on the first frame after a beep that lasted long enough. */
  feed(samples: Int16Array): boolean {
    let sum = 0;
    for (let i = 0; i < samples.length; i++) sum += samples[i]! * samples[i]!;
    const levelDb = 10 * Math.log10(sum / samples.length / (32768 * 32768) + 1e-12);
    let bestHz = 0;
    let best = 0;
    if (levelDb > (this.options.minLevelDb ?? -40)) {
      for (let hz = TONE_LOW_HZ; hz <= TONE_HIGH_HZ; hz += TONE_STEP_HZ) {
        const t = tonality(samples, hz);
        if (t > best) {
          best = t;
          bestHz = hz;
        }
      }
    }
    const isTone = best > 0.6;
    if (isTone && (this.toneMs === 0 || Math.abs(bestHz - this.toneHz) <= 50)) {
      this.toneHz = this.toneMs === 0 ? bestHz : this.toneHz;
      this.toneMs += 20;
      return false;
    }
    const ended = this.toneMs >= (this.options.minMs ?? 160);
    this.toneMs = isTone ? 20 : 0;
    this.toneHz = isTone ? bestHz : 0;
    return ended;
  }
}
