/**
 * The hearing benches' corpus (bench/corpus/*.yaml): cases (what a caller says at a recipe's
 * listening block and what it must be heard as) and renderings (who says it: a flite, Festival or
 * espeak-ng voice, optionally at another tempo or with line noise). Rendered audio is 8 kHz PCM
 * (16 kHz for a wideband line: render16k), cached under the temp directory by text and rendering.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { decodeWav, encodeWav } from '../media/wav/wav.js';
import { fliteSpeech } from '../test/voice/voice-harness.js';

const run = promisify(execFile);

export type Voice = { readonly flite: string } | { readonly festival: string } | { readonly espeak: string };

export interface Rendering {
  readonly name: string;
  readonly voice: Voice;
  /** sox `tempo` factor (1.15: 15% faster, same pitch). */
  readonly tempo?: number;
  /** White noise (the telephone band) at this many dB below the speech's level. */
  readonly snrDb?: number;
  /** flite's own duration stretch (flite voices only; 1.3 is a caller saying it again, slower). */
  readonly stretch?: number;
  /** sox `pitch` shift in cents (-400: a third lower, same tempo): another speaker from one voice. */
  readonly pitch?: number;
}

/** The sox effects after resampling: tempo, then pitch. */
const soxEffects = (r: Rendering): string[] => [...(r.tempo ? ['tempo', String(r.tempo)] : []), ...(r.pitch ? ['pitch', String(r.pitch)] : [])];
/** Part of a rendering's cache key; absent when 0, so the keys of renderings without it stay as they were. */
const pitchKey = (r: Rendering): number[] => (r.pitch ? [r.pitch] : []);

export interface HearingCase {
  readonly recipe: string;
  readonly block: string;
  readonly say: string;
  /** Meanings it may be heard as, `|`-separated ('' = none; `words:a|b` = a knowledge question). */
  readonly expect: string;
  readonly date?: string;
  readonly amount?: number;
  /** A digit string it states (an order number), kept as said: leading zeros count. */
  readonly digits?: string;
}

export interface Corpus {
  readonly split: string;
  readonly renderings: readonly Rendering[];
  readonly cases: readonly HearingCase[];
}

const corpusDir = path.resolve(import.meta.dirname, 'corpus');

export async function loadCorpus(split: string): Promise<Corpus> {
  const doc = parse(await readFile(path.join(corpusDir, `${split}.yaml`), 'utf8')) as Corpus;
  for (const c of doc.cases) {
    if (typeof c.recipe !== 'string' || typeof c.block !== 'string' || typeof c.say !== 'string' || typeof c.expect !== 'string') {
      throw new Error(`${split}.yaml: a case needs recipe, block, say and expect: ${JSON.stringify(c)}`);
    }
    if (c.digits !== undefined && typeof c.digits !== 'string') throw new Error(`${split}.yaml: digits must be a quoted string: ${JSON.stringify(c)}`);
  }
  return doc;
}

const cacheDir = path.join(tmpdir(), 'vap-hearing-corpus');

/**
 * The case's text said by the rendering's voice at 16 kHz (before a wideband phone line, G.722),
 * resampled by sox from the voice's own rate; cached beside the 8 kHz renderings.
 */
export async function render16k(text: string, rendering: Rendering): Promise<Int16Array> {
  const key = createHash('sha256').update(JSON.stringify([text, rendering.voice, rendering.tempo ?? 1, rendering.snrDb ?? null, rendering.stretch ?? 1, 16000, ...pitchKey(rendering)])).digest('hex').slice(0, 24);
  const file = path.join(cacheDir, `${key}.s16`);
  const cached = await readFile(file).catch(() => undefined);
  if (cached) return new Int16Array(cached.buffer, cached.byteOffset, cached.length >> 1).slice();
  await mkdir(cacheDir, { recursive: true });
  const work = path.join(cacheDir, `${key}.${process.pid}`);
  try {
    const raw = `${work}.raw.wav`;
    const slower = rendering.stretch && rendering.stretch !== 1 ? ['--setf', `duration_stretch=${rendering.stretch}`] : [];
    if ('flite' in rendering.voice) await run('flite', ['-voice', rendering.voice.flite, ...slower, '-t', text, '-o', raw]);
    else if ('espeak' in rendering.voice) await run('espeak-ng', ['-v', rendering.voice.espeak, '-w', raw, text]);
    else await festival(text, rendering.voice.festival, raw);
    const out = `${work}.s16.tmp`;
    await run('sox', [raw, '-r', '16000', '-c', '1', '-b', '16', '-e', 'signed-integer', '-t', 'raw', out, ...soxEffects(rendering)]);
    const bytes = await readFile(out);
    let pcm: Int16Array = new Int16Array(bytes.buffer, bytes.byteOffset, bytes.length >> 1).slice();
    if (rendering.snrDb !== undefined) pcm = withNoise(pcm, rendering.snrDb, key);
    await writeFile(`${work}.final`, Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength));
    await rename(`${work}.final`, file);
    return pcm;
  } finally {
    await Promise.all(['.raw.wav', '.s16.tmp', '.txt', '.final'].map((ext) => rm(`${work}${ext}`, { force: true })));
  }
}

/** The case's text said by the rendering's voice, as 8 kHz PCM (before any phone line). */
export async function render(text: string, rendering: Rendering): Promise<Int16Array> {
  // The flite voices are rendered exactly as the tests' callers are (and as this bench always did).
  if ('flite' in rendering.voice && !rendering.tempo && !rendering.pitch && rendering.snrDb === undefined) return fliteSpeech(text, rendering.voice.flite, rendering.stretch ?? 1);
  const key = createHash('sha256').update(JSON.stringify([text, rendering.voice, rendering.tempo ?? 1, rendering.snrDb ?? null, ...pitchKey(rendering)])).digest('hex').slice(0, 24);
  const file = path.join(cacheDir, `${key}.wav`);
  const cached = await readFile(file).catch(() => undefined);
  if (cached) return decodeWav(cached);
  await mkdir(cacheDir, { recursive: true });
  const work = path.join(cacheDir, `${key}.${process.pid}`);
  try {
    const raw = `${work}.raw.wav`;
    if ('flite' in rendering.voice) await run('flite', ['-voice', rendering.voice.flite, '-t', text, '-o', raw]);
    else if ('espeak' in rendering.voice) await run('espeak-ng', ['-v', rendering.voice.espeak, '-w', raw, text]);
    else await festival(text, rendering.voice.festival, raw);
    // sox resamples properly (Festival speaks at 16 or 32 kHz, espeak-ng at 22.05 kHz), changes tempo without pitch and pitch without tempo.
    const out = `${work}.wav`;
    await run('sox', [raw, '-r', '8000', '-c', '1', '-b', '16', '-e', 'signed-integer', out, ...soxEffects(rendering)]);
    let pcm = decodeWav(await readFile(out));
    if (rendering.snrDb !== undefined) pcm = withNoise(pcm, rendering.snrDb, key);
    await writeFile(`${work}.final`, encodeWav(pcm));
    await rename(`${work}.final`, file);
    return pcm;
  } finally {
    await Promise.all(['.raw.wav', '.wav', '.txt', '.final'].map((ext) => rm(`${work}${ext}`, { force: true })));
  }
}

async function festival(text: string, voice: string, out: string): Promise<void> {
  const input = out.replace(/\.raw\.wav$/, '.txt');
  await writeFile(input, text);
  await run('text2wave', ['-eval', `(voice_${voice})`, input, '-o', out]);
}

/** White noise at `snrDb` below the speech's RMS (over its voiced 20 ms frames), from a fixed seed. */
function withNoise(pcm: Int16Array, snrDb: number, seed: string): Int16Array {
  let energy = 0;
  let frames = 0;
  for (let i = 0; i + 160 <= pcm.length; i += 160) {
    let e = 0;
    for (let j = i; j < i + 160; j++) e += pcm[j]! * pcm[j]!;
    if (e / 160 > 100 * 100) {
      energy += e / 160;
      frames++;
    }
  }
  const rms = Math.sqrt(energy / Math.max(1, frames)) / 10 ** (snrDb / 20);
  let state = Number.parseInt(seed.slice(0, 8), 16) >>> 0;
  // Uniform noise scaled to the wanted RMS (a uniform variable on [-a, a] has RMS a / sqrt(3)).
  const amplitude = rms * Math.sqrt(3);
  return pcm.map((s) => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return Math.max(-32768, Math.min(32767, Math.round(s + (state / 0x80000000 - 1) * amplitude)));
  });
}
