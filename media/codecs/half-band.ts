/**
 * 8 kHz <-> 16 kHz for wideband calls: the 8 kHz side of the media pipeline (VAD, DTMF, bridges,
 * the agent's output) stays as it is while a G.722 call carries 16 kHz. One symmetric FIR low-pass
 * (windowed sinc, Blackman, 31 taps, cut-off 3.7 kHz at 16 kHz: about 60 dB down by 4.3 kHz) does
 * both jobs; each direction keeps its own history, so 20 ms frames join up without clicks.
 */
const TAPS = 31;
const HALF = (TAPS - 1) / 2;

const taps: Float64Array = (() => {
  const h = new Float64Array(TAPS);
  const fc = 3700 / 16000;
  let sum = 0;
  for (let i = 0; i < TAPS; i++) {
    const m = i - HALF;
    const sinc = m === 0 ? 2 * fc : Math.sin(2 * Math.PI * fc * m) / (Math.PI * m);
    const w = 0.42 - 0.5 * Math.cos((2 * Math.PI * i) / (TAPS - 1)) + 0.08 * Math.cos((4 * Math.PI * i) / (TAPS - 1));
    h[i] = sinc * w;
    sum += h[i] as number;
  }
  for (let i = 0; i < TAPS; i++) h[i] = (h[i] as number) / sum;
  return h;
})();

const clamp = (v: number): number => (v > 32767 ? 32767 : v < -32768 ? -32768 : Math.round(v));

/** A work buffer holding the filter's history followed by the new block, reused between blocks. */
class History {
  private work = new Float64Array(0);

  constructor(private readonly keep: number) {}

  /** The last `keep` inputs of earlier blocks, then `input`; valid until the next call. */
  load(input: Int16Array): Float64Array {
    const size = this.keep + input.length;
    if (this.work.length < size) {
      const bigger = new Float64Array(size);
      bigger.set(this.work.subarray(0, this.keep));
      this.work = bigger;
    }
    const w = this.work;
    for (let i = 0; i < input.length; i++) w[this.keep + i] = input[i] as number;
    return w;
  }

  /** Keeps the last `keep` values of the block just processed for the next one. */
  advance(inputLength: number): void {
    this.work.copyWithin(0, inputLength, inputLength + this.keep);
  }
}

/** 16 kHz -> 8 kHz: low-pass, keep every other sample (only the kept outputs are computed). */
export class Downsampler {
  private readonly history = new History(TAPS - 1);

  process(input: Int16Array): Int16Array {
    const x = this.history.load(input);
    const out = new Int16Array(input.length >> 1);
    for (let n = 0; n < out.length; n++) {
      // y[n] = sum h[k] in[2n + 1 - k]; in[t] sits at x[TAPS - 1 + t].
      const end = 2 * n + TAPS;
      let acc = 0;
      for (let k = 0; k < TAPS; k++) acc += (taps[k] as number) * (x[end - k] as number);
      out[n] = clamp(acc);
    }
    this.history.advance(input.length);
    return out;
  }
}

/**
 * 8 kHz -> 16 kHz: zero-stuff and low-pass, as two polyphase branches (even taps make the even
 * outputs, odd taps the odd ones), so the zeros are never multiplied; gain 2 keeps the level.
 */
export class Upsampler {
  /** Inputs the even branch reaches back: h[2j] for j up to (TAPS - 1) / 2. */
  private static readonly keep = HALF;
  private readonly history = new History(Upsampler.keep);

  process(input: Int16Array): Int16Array {
    const keep = Upsampler.keep;
    const x = this.history.load(input);
    const out = new Int16Array(input.length * 2);
    for (let i = 0; i < input.length; i++) {
      // out[2i] = 2 sum_j h[2j] in[i - j]; out[2i + 1] = 2 sum_j h[2j + 1] in[i - j].
      const at = keep + i;
      let even = 0;
      let odd = 0;
      for (let j = 0; j <= keep; j++) {
        const v = x[at - j] as number;
        even += (taps[2 * j] as number) * v;
        if (2 * j + 1 < TAPS) odd += (taps[2 * j + 1] as number) * v;
      }
      out[2 * i] = clamp(2 * even);
      out[2 * i + 1] = clamp(2 * odd);
    }
    this.history.advance(input.length);
    return out;
  }
}
