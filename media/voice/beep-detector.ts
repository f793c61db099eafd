/**
 * The voicemail beep: a steady single tone. Machines differ in pitch (440 Hz to 1.4 kHz and
 * beyond) and length, so the detector looks for any pitch in 350-2500 Hz held within +-50 Hz.
 */
const TONE_LOW_HZ = 350;
const TONE_HIGH_HZ = 2500;
const TONE_STEP_HZ = 25;
/** Share of a frame's energy in one Goertzel bin above which the frame is a tone, not speech. */
const TONALITY = 0.6;

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
 * Reports the end of a tone that lasted at least `minMs` (the message starts after the beep, not
 * over it); `toneMs` says how long the current tone has lasted so far (the answering-machine
 * detector takes a tone held long enough as a machine without waiting for its end).
 */
export class BeepDetector {
  private toneHz = 0;
  private held = 0;

  constructor(private readonly options: { readonly minMs?: number; readonly minLevelDb?: number } = {}) {}

  /** How long the tone under way has lasted (0 when the last frame was no tone). */
  get toneMs(): number {
    return this.held;
  }

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
    const isTone = best > TONALITY;
    if (isTone && (this.held === 0 || Math.abs(bestHz - this.toneHz) <= 50)) {
      this.toneHz = this.held === 0 ? bestHz : this.toneHz;
      this.held += 20;
      return false;
    }
    const ended = this.held >= (this.options.minMs ?? 160);
    this.held = isTone ? 20 : 0;
    this.toneHz = isTone ? bestHz : 0;
    return ended;
  }
}
