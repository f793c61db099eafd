import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { AnsweringMachineDetector, type AmdDecision, type AmdOptions, type AmdVerdict } from '../../media/voice/voicemail-detector.js';
import { readWav, writeWav } from '../../media/wav/wav.js';

/**
 * A varied set of call openings for answering-machine detection: voicemail greetings that open
 * with a short phrase and a pause, greetings without a pause, beep-only machines, and people who
 * answer "Hello?" (once, twice, with a question) and wait. Synthesised with flite (voices kal,
 * slt, rms, awb) and espeak-ng (several voices and variants); sox makes the beeps, the background
 * noise and the telephone mu-law round trip. Built once per spec into a temp-dir cache.
 */
export type AmdTruth = 'human' | 'machine';

type Voice = { readonly flite: 'kal' | 'slt' | 'rms' | 'awb' } | { readonly espeak: string; readonly wpm?: number };

type Part =
  | { readonly say: string; readonly voice: Voice }
  | { readonly pauseMs: number }
  | { readonly beep: { readonly hz: number; readonly ms: number } };

interface ItemSpec {
  readonly name: string;
  readonly truth: AmdTruth;
  readonly parts: readonly Part[];
  /** Background noise over the whole item (sox synth type and level in dBFS). */
  readonly noise?: { readonly kind: 'whitenoise' | 'pinknoise' | 'brownnoise'; readonly db: number };
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

const kal = { flite: 'kal' } as const;
const slt = { flite: 'slt' } as const;
const rms = { flite: 'rms' } as const;
const awb = { flite: 'awb' } as const;
const usMale = { espeak: 'en-us' } as const;
const usFemale = { espeak: 'en-us+f3' } as const;
const gbFemale = { espeak: 'en-gb+f2', wpm: 155 } as const;
const gbMale = { espeak: 'en-gb' } as const;
const caribbean = { espeak: 'en-029', wpm: 175 } as const;
const say = (text: string, voice: Voice): Part => ({ say: text, voice });
const pause = (ms: number): Part => ({ pauseMs: ms });
const beep = (hz: number, ms: number): Part => ({ beep: { hz, ms } });

export const amdCorpusSpec: readonly ItemSpec[] = [
  // Machines whose greeting opens with a short phrase and a pause (the case length rules miss).
  { name: 'm01-kal-hello-pause-reached', truth: 'machine', parts: [pause(200), say('Hello,', kal), pause(400), say('you have reached the Sharma family. Please leave a message after the tone.', kal), pause(300), beep(1000, 500)] },
  { name: 'm02-slt-hi-this-is-sam', truth: 'machine', parts: [pause(300), say('Hi, this is Sam.', slt), pause(600), say('I cannot come to the phone right now. Leave a message and I will call you back.', slt), pause(500), beep(850, 400)] },
  { name: 'm03-rms-hello-two-pauses', truth: 'machine', parts: [say('Hello.', rms), pause(300), say('You have reached the voicemail of Priya Nair.', rms), pause(250), say('Please leave a message after the tone.', rms), pause(400), beep(1400, 300)] },
  { name: 'm04-awb-hey-its-alex', truth: 'machine', parts: [pause(250), say('Hey,', awb), pause(500), say('it is Alex. Sorry I missed your call, leave your name and number.', awb), pause(600), beep(440, 800)] },
  { name: 'm05-espeak-us-hello-long-pause', truth: 'machine', parts: [pause(150), say('Hello,', usMale), pause(700), say('you have reached the office of doctor Mehta. We are not available right now.', usMale), pause(300), beep(1000, 500)] },
  { name: 'm06-espeak-gb-female-hi', truth: 'machine', parts: [pause(400), say('Hi!', gbFemale), pause(350), say('Sorry we missed you. Please leave a message after the beep.', gbFemale), pause(200), beep(950, 500)] },
  { name: 'm07-espeak-caribbean-good-morning', truth: 'machine', parts: [pause(300), say('Good morning,', caribbean), pause(550), say('thank you for calling. Nobody can take your call, please leave a message.', caribbean), pause(400), beep(1000, 600)] },
  { name: 'm08-kal-hello-pink-noise', truth: 'machine', noise: { kind: 'pinknoise', db: -42 }, parts: [pause(300), say('Hello,', kal), pause(450), say('this is Ravi. I am not available, please leave a message.', kal), pause(300), beep(850, 500)] },
  { name: 'm09-slt-hello-question-quiet', truth: 'machine', levelDb: -16, parts: [pause(200), say('Hello?', slt), pause(500), say('You have reached the Kapoor residence. Please leave a message after the tone.', slt), pause(300), beep(1000, 500)] },
  // Machines that talk on without a pause.
  { name: 'm10-espeak-us-female-continuous', truth: 'machine', parts: [pause(300), say('The person you are calling is not available. Please leave a message after the tone.', usFemale), pause(300), beep(1000, 500)] },
  { name: 'm11-awb-continuous', truth: 'machine', parts: [say('Thank you for calling the clinic. Our office is closed, please leave your name and number after the beep.', awb), pause(400), beep(1400, 400)] },
  // Beep-only machines: just a beep, or silence then a beep.
  { name: 'm12-beep-only-1000', truth: 'machine', parts: [pause(300), beep(1000, 500)] },
  { name: 'm13-silence-then-beep-440', truth: 'machine', parts: [pause(1500), beep(440, 600)] },
  { name: 'm14-silence-then-beep-1400-noise', truth: 'machine', noise: { kind: 'whitenoise', db: -45 }, parts: [pause(2200), beep(1400, 400)] },
  // More greetings with a short phrase and a long pause (800-900 ms), late starts, rumble.
  { name: 'm15-kal-late-hello-long-pause', truth: 'machine', parts: [pause(800), say('Hello,', kal), pause(900), say('you have reached the Rao family. Please leave a message.', kal), pause(300), beep(1000, 500)] },
  { name: 'm16-espeak-female-hi-pause', truth: 'machine', parts: [pause(500), say('Hi,', usFemale), pause(800), say('this is Meera. I cannot take your call right now.', usFemale), pause(500), beep(850, 500)] },
  { name: 'm17-rms-namaste-brown-noise', truth: 'machine', noise: { kind: 'brownnoise', db: -38 }, parts: [pause(300), say('Namaste,', rms), pause(600), say('you have reached Anil. Please leave a message after the beep.', rms), pause(400), beep(1400, 300)] },
  // People: a short answer, then they wait for us.
  { name: 'h01-kal-hello', truth: 'human', parts: [pause(300), say('Hello?', kal)] },
  { name: 'h02-slt-hello-who-is-this', truth: 'human', parts: [pause(400), say('Hello, who is this?', slt)] },
  { name: 'h03-rms-hello-twice', truth: 'human', parts: [pause(300), say('Hello?', rms), pause(1500), say('Hello?', rms)] },
  { name: 'h04-awb-yes-hello', truth: 'human', parts: [pause(500), say('Yes, hello?', awb)] },
  { name: 'h05-espeak-us-hello-pink-noise', truth: 'human', noise: { kind: 'pinknoise', db: -40 }, parts: [pause(300), say('Hello?', usMale)] },
  { name: 'h06-espeak-female-hi-this-is-sam', truth: 'human', parts: [pause(350), say('Hi, this is Sam.', usFemale)] },
  { name: 'h07-espeak-gb-hello-twice-who', truth: 'human', parts: [pause(300), say('Hello?', gbMale), pause(1200), say('Hello? Who is this?', gbMale)] },
  { name: 'h08-slt-late-hello', truth: 'human', parts: [pause(1000), say('Hello?', slt)] },
  { name: 'h09-kal-priya-speaking-white-noise', truth: 'human', noise: { kind: 'whitenoise', db: -42 }, parts: [pause(400), say('Hello, Priya speaking.', kal)] },
  { name: 'h10-espeak-gb-female-hello-twice-brown-noise', truth: 'human', noise: { kind: 'brownnoise', db: -38 }, parts: [pause(300), say('Hello?', gbFemale), pause(1100), say('Hello?', gbFemale)] },
  { name: 'h11-rms-good-morning-quiet', truth: 'human', levelDb: -18, parts: [pause(600), say('Hello, good morning.', rms)] },
  { name: 'h12-espeak-caribbean-yes-who-is-calling', truth: 'human', parts: [pause(300), say('Yes? Who is calling?', caribbean)] },
  { name: 'h13-awb-hello-anyone-there', truth: 'human', parts: [pause(300), say('Hello?', awb), pause(1800), say('Hello? Anyone there?', awb)] },
  { name: 'h14-espeak-us-very-late-hello', truth: 'human', parts: [pause(1200), say('Hello.', usMale)] },
  { name: 'h15-slt-good-afternoon-residence', truth: 'human', parts: [pause(300), say('Good afternoon, Sharma residence.', slt)] },
];

const run = promisify(execFile);
/** Bumped when the way items are built changes, so stale caches are not reused. */
const BUILD_VERSION = 1;
const MIN_MS = 6000;

/** The set, built on first use (about 10 s) and then read from `<tmpdir>/vap-amd-corpus-<hash>/`. */
export async function amdCorpus(): Promise<AmdSample[]> {
  const hash = createHash('sha256').update(JSON.stringify({ BUILD_VERSION, amdCorpusSpec })).digest('hex').slice(0, 12);
  const dir = path.join(tmpdir(), `vap-amd-corpus-${hash}`);
  await mkdir(dir, { recursive: true });
  const out: AmdSample[] = [];
  for (const spec of amdCorpusSpec) out.push(await cachedItem(dir, spec));
  return out;
}

async function cachedItem(dir: string, spec: ItemSpec): Promise<AmdSample> {
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

async function buildItem(work: string, spec: ItemSpec): Promise<{ pcm: Int16Array; beepEndsAtMs?: number; speechEndsAtMs?: number }> {
  const pieces: Int16Array[] = [];
  let atMs = 0;
  let beepEndsAtMs: number | undefined;
  let speechEndsAtMs: number | undefined;
  for (const [i, part] of spec.parts.entries()) {
    let pcm: Int16Array;
    if ('pauseMs' in part) pcm = new Int16Array(part.pauseMs * 8);
    else if ('beep' in part) pcm = await soxPcm(work, `beep-${i}`, ['-n'], ['synth', String(part.beep.ms / 1000), 'sine', String(part.beep.hz), 'vol', '0.3']);
    else pcm = await speech(work, `say-${i}`, part.say, part.voice, spec.levelDb ?? -6);
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
    const amplitude = 10 ** (spec.noise.db / 20);
    const noise = await soxPcm(work, 'noise', ['-n'], ['synth', String(length / 8000), spec.noise.kind, 'vol', String(amplitude)]);
    for (let i = 0; i < length; i++) pcm[i] = Math.max(-32768, Math.min(32767, pcm[i]! + (noise[i] ?? 0)));
  }
  return { pcm, ...(beepEndsAtMs !== undefined ? { beepEndsAtMs } : {}), ...(speechEndsAtMs !== undefined ? { speechEndsAtMs } : {}) };
}

/** One phrase at 8 kHz with its own leading and trailing silence trimmed, so pauses are exact. */
async function speech(work: string, name: string, text: string, voice: Voice, levelDb: number): Promise<Int16Array> {
  const raw = path.join(work, `${name}-tts.wav`);
  if ('flite' in voice) await run('flite', ['-voice', voice.flite, '-t', text, '-o', raw]);
  else await run('espeak-ng', ['-v', voice.espeak, '-s', String(voice.wpm ?? 165), '-w', raw, text]);
  const trim = ['silence', '1', '0.02', '0.5%', 'reverse', 'silence', '1', '0.02', '0.5%', 'reverse'];
  return soxPcm(work, name, [raw], ['rate', '8000', ...trim, 'gain', '-n', String(levelDb)]);
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
