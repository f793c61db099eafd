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

/** 16 kHz -> 8 kHz: low-pass, keep every other sample. */
export class Downsampler {
  private readonly history = new Float64Array(TAPS - 1);

  process(input: Int16Array): Int16Array {
    const x = new Float64Array(this.history.length + input.length);
    x.set(this.history);
    for (let i = 0; i < input.length; i++) x[this.history.length + i] = input[i] as number;
    const out = new Int16Array(input.length >> 1);
    for (let n = 0; n < out.length; n++) {
      // Output n is centred on input 2n + 1 of this block (a fixed delay of HALF input samples).
      const end = 2 * n + 1 + TAPS - 1;
      let acc = 0;
      for (let k = 0; k < TAPS; k++) acc += (taps[k] as number) * (x[end - k] as number);
      out[n] = clamp(acc);
    }
    this.history.set(x.subarray(x.length - this.history.length));
    return out;
  }
}

/** 8 kHz -> 16 kHz: zero-stuff, low-pass (gain 2 to keep the level). */
export class Upsampler {
  private readonly history = new Float64Array(TAPS - 1);

  process(input: Int16Array): Int16Array {
    const x = new Float64Array(this.history.length + input.length * 2);
    x.set(this.history);
    for (let i = 0; i < input.length; i++) x[this.history.length + 2 * i] = 2 * (input[i] as number);
    const out = new Int16Array(input.length * 2);
    for (let n = 0; n < out.length; n++) {
      const end = n + TAPS - 1;
      let acc = 0;
      for (let k = 0; k < TAPS; k++) acc += (taps[k] as number) * (x[end - k] as number);
      out[n] = clamp(acc);
    }
    this.history.set(x.subarray(x.length - this.history.length));
    return out;
  }
}
