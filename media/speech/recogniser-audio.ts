/**
 * What the offline recogniser is given of a caller turn: the speech span only, at the 16 kHz of
 * the en-us model, with low noise where a phone line carries nothing.
 */

/** 10 ms at 8 kHz. */
const SPAN_FRAME = 80;
/** Kept before the first and after the last frame of speech (ms). */
const SPAN_LEAD_MS = 30;
const SPAN_TAIL_MS = 150;
/** A frame is speech when it is within this many dB of the utterance's loudest frame. */
const SPAN_RANGE_DB = 35;

/**
 * The utterance without the line's silence around it. Before speech the decoder takes the
 * (noise-filled) silence for a long "f" filler that swallows a soft onset ("bye" came back as "i"
 * for two of four flite voices). Cut to 30 ms before the first frame within 35 dB of the loudest,
 * bench/hearing-accuracy.ts went from 84 to 88 of 100 right (0 wrong either way), "bye" from 2 to
 * 4 of 4, though one voice's bare "yes" was lost; 50 ms / 30 dB / a 250 ms tail gave 85-86.
 * A live turn and a recording of it also come out the same, whatever pre-roll the VAD kept.
 */
export function speechSpan(pcm: Int16Array): Int16Array {
  const { start, end } = speechSpanBounds(pcm);
  return pcm.subarray(start, end);
}

/** Where `speechSpan` cuts (sample indices, end exclusive); the whole of `pcm` when nothing stands out. */
export function speechSpanBounds(pcm: Int16Array): { readonly start: number; readonly end: number } {
  const levels = frameLevels(pcm);
  const floor = levels.reduce((loudest, l) => Math.max(loudest, l), 0) - SPAN_RANGE_DB;
  const first = levels.findIndex((l) => l > floor);
  if (first < 0) return { start: 0, end: pcm.length };
  let last = levels.length - 1;
  while (last > first && levels[last]! <= floor) last--;
  return { start: Math.max(0, first * SPAN_FRAME - SPAN_LEAD_MS * 8), end: Math.min(pcm.length, (last + 1) * SPAN_FRAME + SPAN_TAIL_MS * 8) };
}

/** Energy of each whole 10 ms frame, in dB. */
function frameLevels(pcm: Int16Array): number[] {
  const levels: number[] = [];
  for (let i = 0; i + SPAN_FRAME <= pcm.length; i += SPAN_FRAME) levels.push(frameLevel(pcm, i));
  return levels;
}

function frameLevel(pcm: Int16Array, at: number): number {
  let energy = 0;
  for (let j = at; j < at + SPAN_FRAME; j++) energy += pcm[j]! * pcm[j]!;
  return 10 * Math.log10(energy / SPAN_FRAME + 1);
}

/**
 * Follows a turn's audio as it arrives, with the span's own measure: how long the audio has been
 * quiet since the last frame that would count as speech. Once that is past the span's tail, the
 * span of the turn so far is the span of the whole turn unless speech (or a louder frame) comes
 * back, which `changes` counts.
 */
export class SpanWatch {
  private readonly levels: number[] = [];
  private carry = new Int16Array(0);
  private loudest = 0;
  private lastSpeech = -1;
  /** Bumped whenever the span of the audio so far may have moved. */
  changes = 0;

  push(samples: Int16Array): void {
    const pcm = this.carry.length > 0 ? concat([this.carry, samples]) : samples;
    let at = 0;
    for (; at + SPAN_FRAME <= pcm.length; at += SPAN_FRAME) {
      const level = frameLevel(pcm, at);
      this.levels.push(level);
      if (level > this.loudest) {
        this.loudest = level;
        this.changes++;
      }
      if (level > this.loudest - SPAN_RANGE_DB) {
        this.lastSpeech = this.levels.length - 1;
        this.changes++;
      }
    }
    this.carry = pcm.slice(at);
  }

  /** Milliseconds of audio after the last speech frame, once more than the span's tail (else 0). */
  quietMs(): number {
    if (this.lastSpeech < 0) return 0;
    const quiet = (this.levels.length - 1 - this.lastSpeech) * 10;
    return quiet > SPAN_TAIL_MS ? quiet : 0;
  }
}

/** The chunks of a turn as one array. */
export function concat(chunks: readonly Int16Array[]): Int16Array {
  const out = new Int16Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/**
 * Two fixed noise realisations: a turn is decoded once with each (pocketsphinx-stt.ts) and a
 * meaning the two decodings do not agree on is doubtful. Fixed, so the same audio is always heard
 * the same way.
 */
export const noiseSeeds: readonly number[] = [0x2545f491, 0x6b43a9b5];

/**
 * Fills the empty 4-8 kHz band of upsampled telephone speech with a steady hiss, over a lower
 * noise floor across the whole band. The wideband model has never seen a dead upper band (it
 * returns nothing or garbage without it: ARCHITECTURE facts), nor digital silence between words.
 * White noise at one level over the whole band (the first way) also lay on the speech itself, and
 * the decoding turned on the noise realisation: bench/hearing-accuracy.ts with three seeds gave
 * 97, 89 and 96 of 116 right with 0, 2 and 1 wrong. Upper band only (`level`) took the floor away
 * under stops ("bye" heard as "i"); with a floor a third as loud (`floorLevel`), three seed sets
 * gave 99, 99 and 100 right, 0 wrong. The upper-band noise is white noise at 8 kHz, interpolated
 * to 16 kHz (so it lies in 0-4 kHz) and mirrored into 4-8 kHz by flipping the sign of every
 * other sample.
 */
export function withLineNoise(speech16k: Int16Array, seed: number, level: number, floorLevel: number): Int16Array {
  const out = new Int16Array(speech16k.length);
  // A linear congruential generator (Numerical Recipes constants): repeatable for a seed.
  let state = seed >>> 0;
  const next = (amplitude: number): number => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return (state / 0x80000000 - 1) * amplitude * 32767;
  };
  let previous = next(level);
  for (let i = 0; i < out.length; i += 2) {
    const current = next(level);
    out[i] = clamp(speech16k[i]! + previous + next(floorLevel));
    if (i + 1 < out.length) out[i + 1] = clamp(speech16k[i + 1]! - (previous + current) / 2 + next(floorLevel));
    previous = current;
  }
  return out;
}

const clamp = (v: number): number => Math.max(-32768, Math.min(32767, Math.round(v)));

/** 16 ms analysis frames at 16 kHz for `upperBandDb` (62.5 Hz per bin). */
const BAND_FRAME = 256;
/** DFT bins of the telephone band (0.3-3.4 kHz) and of the band above it that G.722 adds (4.2-7 kHz). */
const lowBins = { from: 5, to: 54 };
const highBins = { from: 67, to: 112 };
/** Frames quieter than this (RMS) are pauses, left out of the measure. */
const BAND_MIN_RMS = 300;
const twiddles = (() => {
  const cos = new Float64Array(BAND_FRAME * (highBins.to + 1));
  const sin = new Float64Array(BAND_FRAME * (highBins.to + 1));
  for (let k = 0; k <= highBins.to; k++) {
    for (let n = 0; n < BAND_FRAME; n++) {
      cos[k * BAND_FRAME + n] = Math.cos((2 * Math.PI * k * n) / BAND_FRAME);
      sin[k * BAND_FRAME + n] = Math.sin((2 * Math.PI * k * n) / BAND_FRAME);
    }
  }
  return { cos, sin };
})();

/**
 * Energy of 4.2-7 kHz against 0.3-3.4 kHz over the voiced frames of 16 kHz audio, in dB (every
 * other frame: a measure, not an analysis). Speech said into a wideband phone is within about 25 dB
 * (flite and Festival 16 kHz voices through G.722: -10 to -25); speech that was narrowband before
 * it reached a G.722 leg (an 8 kHz voice, a transcoded G.711 call) leaves only the codec's own
 * noise up there, 28 to 30 dB down. -Infinity when no frame is voiced.
 */
export function upperBandDb(pcm16k: Int16Array): number {
  let low = 0;
  let high = 0;
  const { cos, sin } = twiddles;
  for (let at = 0; at + BAND_FRAME <= pcm16k.length; at += 2 * BAND_FRAME) {
    let energy = 0;
    for (let n = 0; n < BAND_FRAME; n++) energy += pcm16k[at + n]! ** 2;
    if (energy / BAND_FRAME < BAND_MIN_RMS ** 2) continue;
    for (const [bins, add] of [[lowBins, (e: number) => (low += e)], [highBins, (e: number) => (high += e)]] as const) {
      for (let k = bins.from; k <= bins.to; k++) {
        let re = 0;
        let im = 0;
        for (let n = 0; n < BAND_FRAME; n++) {
          re += pcm16k[at + n]! * cos[k * BAND_FRAME + n]!;
          im -= pcm16k[at + n]! * sin[k * BAND_FRAME + n]!;
        }
        add(re * re + im * im);
      }
    }
  }
  return low > 0 ? 10 * Math.log10((high + 1e-9) / low) : -Infinity;
}
