/** Test tones and a Goertzel measure of how much of a signal is one frequency. */

export function tone(frequency: number, seconds: number, sampleRate: number, amplitude = 8000): Int16Array {
  const out = new Int16Array(Math.round(seconds * sampleRate));
  for (let i = 0; i < out.length; i++) out[i] = Math.round(amplitude * Math.sin((2 * Math.PI * frequency * i) / sampleRate));
  return out;
}

/**
 * The share of the signal's power at `frequency` (Goertzel over the whole span, Hann-windowed):
 * near 1 for a clean tone, near 0 for silence, noise or another tone.
 */
export function toneShare(samples: Int16Array, frequency: number, sampleRate: number): number {
  const n = samples.length;
  if (n === 0) return 0;
  const k = (2 * Math.PI * frequency) / sampleRate;
  const coeff = 2 * Math.cos(k);
  let s1 = 0;
  let s2 = 0;
  let energy = 0;
  for (let i = 0; i < n; i++) {
    const w = 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / (n - 1));
    const x = (samples[i] ?? 0) * w;
    energy += x * x;
    const s0 = x + coeff * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  const power = s1 * s1 + s2 * s2 - coeff * s1 * s2;
  // A Hann-windowed sinusoid of amplitude A: bin power (A n / 4)^2, windowed energy 3 A^2 n / 16,
  // so power / energy = n / 3 for a pure tone.
  return energy === 0 ? 0 : Math.min(1, power / ((energy * n) / 3));
}

/**
 * Seconds of the signal that are mostly `frequency`, in 200 ms windows (share over `minShare`): unlike
 * one Goertzel over a whole call, silence before or after the tone and a phase jump where a packet
 * came late do not hide the tone that was heard.
 */
export function toneSeconds(samples: Int16Array, frequency: number, sampleRate: number, minShare = 0.5, windowSeconds = 0.2): number {
  const size = Math.round(windowSeconds * sampleRate);
  let windows = 0;
  for (let at = 0; at + size <= samples.length; at += size) {
    if (toneShare(samples.subarray(at, at + size), frequency, sampleRate) > minShare) windows++;
  }
  return windows * windowSeconds;
}

/** RMS in dBFS. */
export function levelDb(samples: Int16Array): number {
  let sum = 0;
  for (const s of samples) sum += s * s;
  return 10 * Math.log10(sum / Math.max(1, samples.length) / 32768 ** 2 + 1e-12);
}
