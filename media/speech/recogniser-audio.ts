import { upsample2x } from './resampler.js';

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
  const levels: number[] = [];
  let loudest = 0;
  for (let i = 0; i + SPAN_FRAME <= pcm.length; i += SPAN_FRAME) {
    let energy = 0;
    for (let j = i; j < i + SPAN_FRAME; j++) energy += pcm[j]! * pcm[j]!;
    const level = 10 * Math.log10(energy / SPAN_FRAME + 1);
    levels.push(level);
    loudest = Math.max(loudest, level);
  }
  const floor = loudest - SPAN_RANGE_DB;
  const first = levels.findIndex((l) => l > floor);
  if (first < 0) return pcm;
  let last = levels.length - 1;
  while (last > first && levels[last]! <= floor) last--;
  return pcm.subarray(Math.max(0, first * SPAN_FRAME - SPAN_LEAD_MS * 8), Math.min(pcm.length, (last + 1) * SPAN_FRAME + SPAN_TAIL_MS * 8));
}

/** The speech span of an 8 kHz turn at 16 kHz, before any noise is added. */
export function recogniserSpeech(pcm8k: Int16Array): Int16Array {
  return upsample2x(speechSpan(pcm8k));
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

/** 16 kHz mono 16-bit WAV header + data. */
export function wav16k(samples: Int16Array): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + samples.length * 2, 4);
  header.write('WAVEfmt ', 8);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(16000, 24);
  header.writeUInt32LE(32000, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36);
  header.writeUInt32LE(samples.length * 2, 40);
  return Buffer.concat([header, Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength)]);
}
