/**
 * Second-order Butterworth high-pass (RBJ audio-EQ cookbook biquad, direct form I) for 8 kHz
 * frames. The answering-machine detector runs its VAD behind it: a telephone voice lives above
 * 300 Hz, while rumble (traffic, wind, handling noise) sits below and has the low zero-crossing
 * rate of voice, so an unfiltered energy VAD takes it for speech in the first second, before
 * its noise floor has learnt it.
 */
export class HighPassFilter {
  private readonly b0: number;
  private readonly b1: number;
  private readonly b2: number;
  private readonly a1: number;
  private readonly a2: number;
  private x1 = 0;
  private x2 = 0;
  private y1 = 0;
  private y2 = 0;

  constructor(cutoffHz: number, sampleRate = 8000) {
    const w = (2 * Math.PI * cutoffHz) / sampleRate;
    const alpha = Math.sin(w) / (2 * Math.SQRT1_2);
    const cos = Math.cos(w);
    const a0 = 1 + alpha;
    this.b0 = (1 + cos) / 2 / a0;
    this.b1 = -(1 + cos) / a0;
    this.b2 = (1 + cos) / 2 / a0;
    this.a1 = (-2 * cos) / a0;
    this.a2 = (1 - alpha) / a0;
  }

  /** Filters one frame into a new array (the filter keeps its state across frames). */
  process(samples: Int16Array): Int16Array {
    const out = new Int16Array(samples.length);
    for (let i = 0; i < samples.length; i++) {
      const x = samples[i]!;
      const y = this.b0 * x + this.b1 * this.x1 + this.b2 * this.x2 - this.a1 * this.y1 - this.a2 * this.y2;
      this.x2 = this.x1;
      this.x1 = x;
      this.y2 = this.y1;
      this.y1 = y;
      out[i] = Math.max(-32768, Math.min(32767, Math.round(y)));
    }
    return out;
  }
}
