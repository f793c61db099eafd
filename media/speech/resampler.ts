/**
 * Streaming band-limited resampler (windowed-sinc, Blackman window, 64 fractional phases) for
 * provider audio at 16/22.05/24 kHz down to the call's 8 kHz. Streaming matters: TTS chunks are
 * converted as they arrive, with the filter's history carried across chunks.
 */
const HALF_TAPS = 12;
const PHASES = 64;

export class Resampler {
  private readonly step: number;
  private readonly table: Float32Array;
  private buf = new Float32Array(HALF_TAPS);
  private pos = HALF_TAPS;

  constructor(
    readonly inRate: number,
    readonly outRate: number,
  ) {
    this.step = inRate / outRate;
    // Cut-off just under the lower Nyquist frequency, in cycles per input sample.
    const fc = (0.45 * Math.min(inRate, outRate)) / inRate;
    this.table = new Float32Array(PHASES * 2 * HALF_TAPS);
    for (let p = 0; p < PHASES; p++) {
      for (let j = 0; j < 2 * HALF_TAPS; j++) {
        const d = j - HALF_TAPS + 1 - p / PHASES;
        const x = 2 * fc * d;
        const sinc = x === 0 ? 1 : Math.sin(Math.PI * x) / (Math.PI * x);
        const w = (d + HALF_TAPS) / (2 * HALF_TAPS);
        const blackman = 0.42 - 0.5 * Math.cos(2 * Math.PI * w) + 0.08 * Math.cos(4 * Math.PI * w);
        this.table[p * 2 * HALF_TAPS + j] = 2 * fc * sinc * Math.max(0, blackman);
      }
    }
  }

  process(input: Int16Array): Int16Array {
    if (this.inRate === this.outRate) return input;
    const merged = new Float32Array(this.buf.length + input.length);
    merged.set(this.buf);
    for (let i = 0; i < input.length; i++) merged[this.buf.length + i] = input[i]!;
    const out: number[] = [];
    let pos = this.pos;
    while (pos + HALF_TAPS < merged.length) {
      const base = Math.floor(pos);
      const phase = Math.min(PHASES - 1, Math.round((pos - base) * PHASES));
      const off = phase * 2 * HALF_TAPS;
      let acc = 0;
      for (let j = 0; j < 2 * HALF_TAPS; j++) acc += merged[base - HALF_TAPS + 1 + j]! * this.table[off + j]!;
      out.push(acc);
      pos += this.step;
    }
    const drop = Math.max(0, Math.floor(pos) - HALF_TAPS);
    this.buf = merged.slice(drop);
    this.pos = pos - drop;
    const result = new Int16Array(out.length);
    for (let i = 0; i < out.length; i++) result[i] = Math.max(-32768, Math.min(32767, Math.round(out[i]!)));
    return result;
  }
}

/** 8 kHz -> 16 kHz by linear interpolation (the recogniser's input; quality matters less up). */
export function upsample2x(input: Int16Array): Int16Array {
  const out = new Int16Array(input.length * 2);
  for (let i = 0; i < input.length; i++) {
    const a = input[i]!;
    const b = input[i + 1] ?? a;
    out[2 * i] = a;
    out[2 * i + 1] = (a + b) >> 1;
  }
  return out;
}
