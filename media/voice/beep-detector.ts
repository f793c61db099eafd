/**
 * The voicemail beep: one steady tone. Machines differ in pitch (400 Hz to 2 kHz and beyond) and
 * length, and the line under it may be noisy (G.711, hiss, rumble). So the test is narrowband,
 * not a share of the frame's energy: over the last 40 ms (Hann window, bins every 25 Hz from
 * 375 to 2500 Hz), the strongest bin must stand well above its spectral neighbourhood (100-300 Hz
 * away on both sides) and above any other peak of the band. Broadband noise lifts the
 * neighbourhood as much as the tone's bin's floor, so the test holds down to a few dB of
 * signal-to-noise ratio; voiced speech fails it, because its neighbourhood holds the next
 * harmonics (100-300 Hz apart) and its pitch drifts. A tone is then a run of such frames on the
 * same pitch (within one bin either way) whose main lobe also carries a large share of the
 * window's power (a single strong harmonic of a held vowel can pass the neighbourhood test).
 */
const TONE_LOW_HZ = 375;
const TONE_HIGH_HZ = 2500;
const STEP_HZ = 25;
const WINDOW = 320;
/** The peak's power over the mean of its neighbourhood (dB) for a frame to be tonal. */
const PEAK_OVER_NEIGHBOURS_DB = 15;
/** The peak's power over the strongest bin more than 150 Hz away (dB): one tone, not harmonics. */
const PEAK_OVER_OTHERS_DB = 9;
/**
 * The share of the window's whole power (0-4 kHz, Parseval) in the peak's main lobe (+-2 bins):
 * a tone carries most of it even under noise at 0 dB; a held vowel's harmonic does not, because
 * its fundamental and lower harmonics (below the band) carry much of the voice's power.
 */
const LOBE_SHARE = 0.4;
const NEAR_BINS = 4;
const FAR_BINS = 12;

const hann = Float64Array.from({ length: WINDOW }, (_, i) => 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / (WINDOW - 1)));
const bins = Array.from({ length: (TONE_HIGH_HZ - TONE_LOW_HZ) / STEP_HZ + 1 }, (_, i) => 2 * Math.cos((2 * Math.PI * (TONE_LOW_HZ + i * STEP_HZ)) / 8000));

/** Power at each bin of the band (Goertzel over the windowed samples). */
function spectrum(x: Float64Array): Float64Array {
  const out = new Float64Array(bins.length);
  for (let b = 0; b < bins.length; b++) {
    const coeff = bins[b]!;
    let s1 = 0;
    let s2 = 0;
    for (let i = 0; i < x.length; i++) {
      const s0 = x[i]! + coeff * s1 - s2;
      s2 = s1;
      s1 = s0;
    }
    out[b] = s1 * s1 + s2 * s2 - coeff * s1 * s2;
  }
  return out;
}

/** The bin of a tone in this window of `energy` (sum of squares), or -1 (speech, noise, silence). */
function toneBin(p: Float64Array, energy: number): number {
  let peak = 0;
  for (let b = 1; b < p.length; b++) if (p[b]! > p[peak]!) peak = b;
  let sum = 0;
  let n = 0;
  let others = 0;
  let lobe = 0;
  for (let b = 0; b < p.length; b++) {
    const d = Math.abs(b - peak);
    if (d <= 2) lobe += p[b]!;
    if (d >= NEAR_BINS && d <= FAR_BINS) {
      sum += p[b]!;
      n++;
    }
    if (d > 6) others = Math.max(others, p[b]!);
  }
  const neighbours = sum / Math.max(1, n);
  const db = (a: number, b: number): number => 10 * Math.log10((a + 1e-9) / (b + 1e-9));
  const tonal = lobe >= LOBE_SHARE * (WINDOW / 2) * energy && db(p[peak]!, neighbours) >= PEAK_OVER_NEIGHBOURS_DB && db(p[peak]!, others) >= PEAK_OVER_OTHERS_DB;
  return tonal ? peak : -1;
}

/**
 * Reports the end of a tone that lasted at least `minMs` (the message starts after the beep, not
 * over it); `toneMs` says how long the current tone has lasted so far (the answering-machine
 * detector takes a tone held long enough as a machine without waiting for its end).
 */
export class BeepDetector {
  private readonly window = new Float64Array(WINDOW);
  private toneBinIndex = -1;
  private held = 0;
  /** One frame that misses the test inside a tone (a noise burst) does not end it. */
  private missed = 0;

  constructor(private readonly options: { readonly minMs?: number; readonly minLevelDb?: number } = {}) {}

  /** How long the tone under way has lasted (0 when there is none). */
  get toneMs(): number {
    return this.held;
  }

  /** The tone's pitch while one is under way (Hz), else 0. */
  get toneHz(): number {
    return this.held > 0 ? TONE_LOW_HZ + this.toneBinIndex * STEP_HZ : 0;
  }

  /** Feeds one 20 ms frame; true on the first frame after a beep that lasted long enough. */
  feed(samples: Int16Array): boolean {
    this.window.copyWithin(0, samples.length);
    let sum = 0;
    for (let i = 0; i < samples.length; i++) sum += samples[i]! * samples[i]!;
    const levelDb = 10 * Math.log10(sum / samples.length / (32768 * 32768) + 1e-12);
    const at = WINDOW - samples.length;
    for (let i = 0; i < samples.length; i++) this.window[at + i] = samples[i]!;
    let bin = -1;
    if (levelDb > (this.options.minLevelDb ?? -45)) {
      const x = new Float64Array(WINDOW);
      let energy = 0;
      for (let i = 0; i < WINDOW; i++) {
        x[i] = this.window[i]! * hann[i]!;
        energy += x[i]! * x[i]!;
      }
      bin = toneBin(spectrum(x), energy);
    }
    if (bin >= 0 && (this.held === 0 || Math.abs(bin - this.toneBinIndex) <= 1)) {
      if (this.held === 0) this.toneBinIndex = bin;
      this.held += 20 * (1 + this.missed);
      this.missed = 0;
      return false;
    }
    if (this.held > 0 && this.missed === 0 && bin < 0) {
      this.missed = 1;
      return false;
    }
    const ended = this.held >= (this.options.minMs ?? 160);
    this.held = bin >= 0 ? 20 : 0;
    this.toneBinIndex = bin;
    this.missed = 0;
    return ended;
  }
}
