import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { metricsRegistry } from '../../core/metrics.js';
import { BeepDetector } from '../../media/voice/beep-detector.js';
import { frameLevelDb } from '../../media/voice/vad.js';
import { writeWav } from '../../media/wav/wav.js';
import { scenarioDir } from '../helpers/sipp.js';
import { fliteSpeech } from './voice-harness.js';

/** The far end of a campaign call as SIPp plays it: its audio, and what to read back from a recording. */
const run = promisify(execFile);

/**
 * The callee's audio as SIPp streams it (8 kHz mu-law PCMU), in a copy of the play-audio scenario
 * under `dir`; `loop` repeats it until the call ends (SIPp rtp_stream loop count -1).
 */
export async function calleeScenario(dir: string, name: string, pcm: Int16Array, { loop = false }: { loop?: boolean } = {}): Promise<string> {
  await writeWav(path.join(dir, `${name}-pcm.wav`), pcm);
  const wav = path.join(dir, `${name}.wav`);
  await run('sox', [path.join(dir, `${name}-pcm.wav`), '-r', '8000', '-c', '1', '-e', 'u-law', wav]);
  const template = await readFile(path.join(scenarioDir, 'uas-answer-play-audio-expect-bye.xml'), 'utf8');
  const scenario = template.replace('rtp_stream="callee.wav,1,0"', `rtp_stream="${wav},${loop ? -1 : 1},0"`);
  assert.notEqual(scenario, template);
  const file = path.join(dir, `${name}.xml`);
  await writeFile(file, scenario);
  return path.relative(scenarioDir, file);
}

export const silence = (ms: number): Int16Array => new Int16Array(ms * 8);

export const concat = (...parts: Int16Array[]): Int16Array => {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  parts.reduce((at, p) => (out.set(p, at), at + p.length), 0);
  return out;
};

/** flite speech without its own leading and trailing silence, so the pauses put in are exact. */
export async function trimmedFlite(text: string): Promise<Int16Array> {
  const pcm = await fliteSpeech(text);
  let from = 0;
  let to = pcm.length;
  while (from < to && Math.abs(pcm[from]!) < 300) from++;
  while (to > from && Math.abs(pcm[to - 1]!) < 300) to--;
  return pcm.slice(from, to);
}

/**
 * An answering machine whose greeting opens with a short phrase and a pause (the common case
 * length rules miss: "Hello, [700 ms] you have reached ..."), then a 1 kHz beep, then it records.
 */
export async function machineAudio(): Promise<Int16Array> {
  const hello = await trimmedFlite('Hello,');
  const rest = await trimmedFlite('you have reached the Sharma family. We cannot take your call right now. Please leave your name and number after the tone.');
  const beep = Int16Array.from({ length: 8 * 600 }, (_, i) => Math.round(9000 * Math.sin((2 * Math.PI * 1000 * i) / 8000)));
  return concat(silence(300), hello, silence(700), rest, silence(300), beep, silence(12_000));
}

/** Where a recording channel is voiced: [start ms, end ms] runs, gaps up to 200 ms bridged. */
export function voicedRuns(pcm: Int16Array): [number, number][] {
  const runs: [number, number][] = [];
  for (let i = 0; i + 160 <= pcm.length; i += 160) {
    if (frameLevelDb(pcm.subarray(i, i + 160)) < -40) continue;
    const last = runs[runs.length - 1];
    if (last && i / 8 - last[1] <= 200) last[1] = i / 8 + 20;
    else runs.push([i / 8, i / 8 + 20]);
  }
  return runs;
}

/** Where the first beep in `pcm` ends (ms), -1 without one. */
export function beepEnd(pcm: Int16Array): number {
  const beep = new BeepDetector();
  for (let i = 0; i + 160 <= pcm.length; i += 160) if (beep.feed(pcm.subarray(i, i + 160))) return i / 8;
  return -1;
}

/** vap_amd_verdicts_total for one verdict, summed over reasons, as Prometheus would scrape it. */
export async function verdictCount(verdict: string): Promise<number> {
  const metric = await metricsRegistry.getSingleMetric('vap_amd_verdicts_total')?.get();
  return (metric?.values ?? []).filter((v) => v.labels.verdict === verdict).reduce((n, v) => n + v.value, 0);
}
