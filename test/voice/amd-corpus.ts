import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { AnsweringMachineDetector, type AmdDecision, type AmdOptions, type AmdVerdict } from '../../media/voice/voicemail-detector.js';
import { readWav, writeWav } from '../../media/wav/wav.js';

/**
 * Builds sets of call openings for answering-machine detection (the splits: amd-tuning-set.ts,
 * amd-heldout-set.ts): voicemail greetings that open with a short phrase and a pause, greetings
 * without a pause, beep-only machines, and people who answer and wait. Speech from flite,
 * espeak-ng or Festival (`text2wave`), optionally at another tempo (sox `tempo`, pitch kept);
 * sox makes the beeps, the background noise (at a fixed level, or a signal-to-noise ratio) and
 * the telephone mu-law round trip. Built once per spec into a temp-dir cache.
 */
export type AmdTruth = 'human' | 'machine';

export type Voice =
  | { readonly flite: 'kal' | 'slt' | 'rms' | 'awb' }
  | { readonly espeak: string; readonly wpm?: number }
  | { readonly festival: 'kal_diphone' | 'ked_diphone' | 'cmu_us_slt_arctic_hts' };

export type Part =
  | { readonly say: string; readonly voice: Voice }
  | { readonly pauseMs: number }
  | { readonly beep: { readonly hz: number; readonly ms: number; readonly db?: number } };

type NoiseKind = 'whitenoise' | 'pinknoise' | 'brownnoise';

export interface AmdItemSpec {
  readonly name: string;
  readonly truth: AmdTruth;
  readonly parts: readonly Part[];
  /**
   * Background noise over the whole item: sox synth type and either its amplitude in dBFS (`db`)
   * or its RMS `snrDb` below the mean power of the item's speech and beeps.
   */
  readonly noise?: { readonly kind: NoiseKind; readonly db: number } | { readonly kind: NoiseKind; readonly snrDb: number };
  /** Speech tempo factor (sox `tempo`: 1.15 is 15% faster, pitch kept); pauses stay exact. */
  readonly tempo?: number;
  /** Speech level in dBFS (peak-normalised). Default -6. */
  readonly levelDb?: number;
}

export interface AmdSample {
  readonly name: string;
  readonly truth: AmdTruth;
  /** 8 kHz mono PCM after a mu-law round trip, 6 s or more (silence after the last part). */
  readonly pcm: Int16Array;
  /** Where the last beep ends (ms from the start), if the item has one. */
  readonly beepEndsAtMs?: number;
  /** Where the last speech ends (ms from the start). */
  readonly speechEndsAtMs?: number;
}

export const say = (text: string, voice: Voice): Part => ({ say: text, voice });
export const pause = (ms: number): Part => ({ pauseMs: ms });
/** A beep; `db` is its peak level in dBFS (default about -10.5, sox `vol 0.3`). */
export const beep = (hz: number, ms: number, db?: number): Part => ({ beep: { hz, ms, ...(db !== undefined ? { db } : {}) } });

const run = promisify(execFile);
/** Bumped when the way items are built changes, so stale caches are not reused. */
const BUILD_VERSION = 1;
const MIN_MS = 6000;

/** A set, built on first use (about 10 s) and then read from `<tmpdir>/vap-amd-corpus-<hash>/`. */
export async function buildAmdSet(specs: readonly AmdItemSpec[]): Promise<AmdSample[]> {
  // The tuning split keeps the hash (and cache) it had when it was the only set.
  const hash = createHash('sha256').update(JSON.stringify({ BUILD_VERSION, amdCorpusSpec: specs })).digest('hex').slice(0, 12);
  const dir = path.join(tmpdir(), `vap-amd-corpus-${hash}`);
  await mkdir(dir, { recursive: true });
  const out: AmdSample[] = [];
  for (const spec of specs) out.push(await cachedItem(dir, spec));
  return out;
}

async function cachedItem(dir: string, spec: AmdItemSpec): Promise<AmdSample> {
  const file = path.join(dir, `${spec.name}.wav`);
  const metaFile = path.join(dir, `${spec.name}.json`);
  try {
    const meta = JSON.parse(await readFile(metaFile, 'utf8')) as { beepEndsAtMs?: number; speechEndsAtMs?: number };
    return { name: spec.name, truth: spec.truth, pcm: await readWav(file), ...meta };
  } catch {
    // Not cached yet (or a partial write): build it.
  }
  const work = path.join(dir, `${spec.name}.work`);
  await mkdir(work, { recursive: true });
  try {
    const built = await buildItem(work, spec);
    await writeWav(path.join(work, 'mix.wav'), built.pcm);
    // The telephone path: 8 kHz mu-law, as the call's RTP carries it.
    await run('sox', [path.join(work, 'mix.wav'), '-e', 'u-law', path.join(work, 'ulaw.wav')]);
    await rename(path.join(work, 'ulaw.wav'), file);
    const meta = { ...(built.beepEndsAtMs !== undefined ? { beepEndsAtMs: built.beepEndsAtMs } : {}), ...(built.speechEndsAtMs !== undefined ? { speechEndsAtMs: built.speechEndsAtMs } : {}) };
    await writeWavMeta(metaFile, meta);
    return { name: spec.name, truth: spec.truth, pcm: await readWav(file), ...meta };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

async function writeWavMeta(file: string, meta: object): Promise<void> {
  await writeFile(`${file}.tmp`, JSON.stringify(meta));
  await rename(`${file}.tmp`, file);
}

async function buildItem(work: string, spec: AmdItemSpec): Promise<{ pcm: Int16Array; beepEndsAtMs?: number; speechEndsAtMs?: number }> {
  const pieces: Int16Array[] = [];
  let atMs = 0;
  let beepEndsAtMs: number | undefined;
  let speechEndsAtMs: number | undefined;
  let signalEnergy = 0;
  let signalSamples = 0;
  for (const [i, part] of spec.parts.entries()) {
    let pcm: Int16Array;
    if ('pauseMs' in part) pcm = new Int16Array(part.pauseMs * 8);
    else if ('beep' in part) pcm = await soxPcm(work, `beep-${i}`, ['-n'], ['synth', String(part.beep.ms / 1000), 'sine', String(part.beep.hz), 'vol', String(part.beep.db === undefined ? 0.3 : 10 ** (part.beep.db / 20))]);
    else pcm = await speech(work, `say-${i}`, part.say, part.voice, spec.levelDb ?? -6, spec.tempo);
    if (!('pauseMs' in part)) {
      for (const x of pcm) signalEnergy += x * x;
      signalSamples += pcm.length;
    }
    pieces.push(pcm);
    atMs += pcm.length / 8;
    if ('beep' in part) beepEndsAtMs = atMs;
    if ('say' in part) speechEndsAtMs = atMs;
  }
  const length = Math.max(MIN_MS * 8, pieces.reduce((n, p) => n + p.length, 0) + 3000 * 8);
  const pcm = new Int16Array(length);
  let at = 0;
  for (const p of pieces) {
    pcm.set(p, at);
    at += p.length;
  }
  if (spec.noise) {
    const amplitude = 'db' in spec.noise ? 10 ** (spec.noise.db / 20) : 0.25;
    const noise = await soxPcm(work, 'noise', ['-n'], ['synth', String(length / 8000), spec.noise.kind, 'vol', String(amplitude)]);
    let gain = 1;
    if ('snrDb' in spec.noise) {
      const noisePower = noise.reduce((n, x) => n + x * x, 0) / noise.length;
      gain = Math.sqrt(signalEnergy / Math.max(1, signalSamples) / noisePower / 10 ** (spec.noise.snrDb / 10));
    }
    for (let i = 0; i < length; i++) pcm[i] = Math.max(-32768, Math.min(32767, pcm[i]! + Math.round((noise[i] ?? 0) * gain)));
  }
  return { pcm, ...(beepEndsAtMs !== undefined ? { beepEndsAtMs } : {}), ...(speechEndsAtMs !== undefined ? { speechEndsAtMs } : {}) };
}

/** One phrase at 8 kHz with its own leading and trailing silence trimmed, so pauses are exact. */
async function speech(work: string, name: string, text: string, voice: Voice, levelDb: number, tempo?: number): Promise<Int16Array> {
  const raw = path.join(work, `${name}-tts.wav`);
  if ('flite' in voice) await run('flite', ['-voice', voice.flite, '-t', text, '-o', raw]);
  else if ('espeak' in voice) await run('espeak-ng', ['-v', voice.espeak, '-s', String(voice.wpm ?? 165), '-w', raw, text]);
  else {
    const textFile = path.join(work, `${name}.txt`);
    await writeFile(textFile, text);
    await run('text2wave', ['-eval', `(voice_${voice.festival})`, textFile, '-o', raw]).catch((error: unknown) => {
      throw new Error(`Festival voice ${voice.festival} failed: install Debian festival festvox-kallpc16k festvox-kdlpc16k festvox-us-slt-hts (bench/README.md)`, { cause: error });
    });
  }
  const trim = ['silence', '1', '0.02', '0.5%', 'reverse', 'silence', '1', '0.02', '0.5%', 'reverse'];
  const faster = tempo !== undefined && tempo !== 1 ? ['tempo', '-s', String(tempo)] : [];
  return soxPcm(work, name, [raw], ['rate', '8000', ...faster, ...trim, 'gain', '-n', String(levelDb)]);
}

async function soxPcm(work: string, name: string, input: readonly string[], effects: readonly string[]): Promise<Int16Array> {
  const file = path.join(work, `${name}.wav`);
  await run('sox', [...input, '-r', '8000', '-c', '1', '-b', '16', '-e', 'signed-integer', file, ...effects]);
  return readWav(file);
}

export interface AmdRow {
  readonly name: string;
  readonly truth: AmdTruth;
  readonly verdict: AmdVerdict;
  readonly reason: string;
  /** Caller audio heard until the verdict. */
  readonly afterMs: number;
}

/** Runs a fresh detector over every sample, 20 ms frame by frame, as the call's tap feeds it. */
export function classify(samples: readonly AmdSample[], options: AmdOptions = {}): AmdRow[] {
  return samples.map((s) => {
    const amd = new AnsweringMachineDetector(options);
    let decision: AmdDecision | undefined;
    for (let i = 0; i + 160 <= s.pcm.length && !decision; i += 160) decision = amd.feed(s.pcm.subarray(i, i + 160));
    return { name: s.name, truth: s.truth, verdict: decision?.verdict ?? 'unknown', reason: decision?.reason ?? 'end-of-audio', afterMs: decision?.afterMs ?? s.pcm.length / 8 };
  });
}

/** Confusion counts (truth x verdict), correct-within-budget count and time-to-verdict percentiles. */
export function summarise(rows: readonly AmdRow[], budgetMs = 3000) {
  const count = (truth: AmdTruth, verdict: AmdVerdict): number => rows.filter((r) => r.truth === truth && r.verdict === verdict).length;
  const table = { human: { human: count('human', 'human'), machine: count('human', 'machine'), unknown: count('human', 'unknown') }, machine: { human: count('machine', 'human'), machine: count('machine', 'machine'), unknown: count('machine', 'unknown') } };
  const percentile = (values: number[], p: number): number => {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
  };
  const times = (truth?: AmdTruth): number[] => rows.filter((r) => !truth || r.truth === truth).map((r) => r.afterMs);
  return {
    table,
    total: rows.length,
    correctInBudget: rows.filter((r) => r.verdict === r.truth && r.afterMs <= budgetMs).length,
    correct: rows.filter((r) => r.verdict === r.truth).length,
    timing: { all: { p50: percentile(times(), 50), p90: percentile(times(), 90) }, human: { p50: percentile(times('human'), 50), p90: percentile(times('human'), 90) }, machine: { p50: percentile(times('machine'), 50), p90: percentile(times('machine'), 90) } },
  };
}

/** The confusion table and timings as printable lines. */
export function confusionLines(rows: readonly AmdRow[], budgetMs = 3000): string[] {
  const s = summarise(rows, budgetMs);
  const cell = (n: number): string => String(n).padStart(9);
  return [
    `truth \\ verdict   human  machine  unknown`,
    `human          ${cell(s.table.human.human)}${cell(s.table.human.machine)}${cell(s.table.human.unknown)}`,
    `machine        ${cell(s.table.machine.human)}${cell(s.table.machine.machine)}${cell(s.table.machine.unknown)}`,
    `correct within ${budgetMs} ms: ${s.correctInBudget}/${s.total}; correct at all: ${s.correct}/${s.total}`,
    `time to verdict (ms): all p50 ${s.timing.all.p50} p90 ${s.timing.all.p90}; human p50 ${s.timing.human.p50} p90 ${s.timing.human.p90}; machine p50 ${s.timing.machine.p50} p90 ${s.timing.machine.p90}`,
  ];
}
