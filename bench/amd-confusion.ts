/**
 * Answering-machine detection over the two splits of the set of call openings
 * (test/voice/amd-splits.ts): the TUNING split (the thresholds were chosen on it) and the
 * HELD-OUT split (other texts, other voices, noise at 20 dB SNR, beeps under noise; never tuned
 * on). For each: the confusion table (truth human/machine x verdict human/machine/unknown), how
 * many were right within the 3 s budget, time to verdict (median, p90) per class and one line per
 * item. Then a sweep of the two thresholds that matter (human pause x greeting span) on the
 * tuning split only, so a change of the defaults is judged where it may be.
 *
 * `--cue-words` also measures the word cue: pocketsphinx with a grammar of voicemail cue words
 * ("reached", "leave", "message", ...) plus common answer words, run on the first `--cue-ms`
 * (default 2600) of each item: which items it flags and how long recognition takes.
 *
 *   node --import tsx bench/amd-confusion.ts [--split tuning|heldout|fresh|both] [--cue-words] [--cue-ms 2600] [--no-sweep]
 */
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { PocketsphinxStt } from '../media/speech/pocketsphinx-stt.js';
import { classify, confusionLines, summarise, type AmdSample } from '../test/voice/amd-corpus.js';
import { amdSplit, type AmdSplit } from '../test/voice/amd-splits.js';

const args = process.argv.slice(2);
const flag = (name: string): boolean => args.includes(`--${name}`);
const arg = (name: string, fallback: string): string => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? (args[i + 1] ?? fallback) : fallback;
};

const CUES = ['reached', 'leave', 'message', 'available', 'tone', 'beep', 'voicemail', 'mailbox', 'after'];
/** Non-cue words the grammar also accepts, so ordinary speech has somewhere else to go. */
const FILLERS = ['who', 'is', 'this', 'speaking', 'good', 'morning', 'calling', 'am', 'right', 'now', 'name', 'number', 'call', 'back', 'sorry', 'have', 'of', 'for'];

async function cueWords(samples: readonly AmdSample[], ms: number): Promise<void> {
  console.log(`\nword cue: pocketsphinx, cue grammar, first ${ms} ms of each item`);
  const stt = new PocketsphinxStt({ vocabulary: [...CUES, ...FILLERS] });
  const latencies: number[] = [];
  let machinesFlagged = 0;
  let humansFlagged = 0;
  for (const s of samples) {
    const stream = await stt.open({ language: 'en-US', keywords: [], signal: new AbortController().signal });
    const pcm = s.pcm.subarray(0, ms * 8);
    for (let i = 0; i + 160 <= pcm.length; i += 160) stream.push(pcm.subarray(i, i + 160));
    const started = performance.now();
    const text = await stream.finish();
    latencies.push(performance.now() - started);
    const hits = text.split(' ').filter((w) => CUES.includes(w));
    if (hits.length > 0 && s.truth === 'machine') machinesFlagged++;
    if (hits.length > 0 && s.truth === 'human') humansFlagged++;
    console.log(`  ${s.name.padEnd(46)} ${s.truth.padEnd(8)} ${String(Math.round(latencies[latencies.length - 1]!)).padStart(5)} ms  ${hits.length ? `cue: ${hits.join(',')}` : '-'}`);
  }
  const sorted = [...latencies].sort((a, b) => a - b);
  const machines = samples.filter((s) => s.truth === 'machine').length;
  console.log(`  machines with a cue word: ${machinesFlagged}/${machines}; people with a cue word: ${humansFlagged}/${samples.length - machines}`);
  console.log(`  recognition time: p50 ${Math.round(sorted[Math.floor(sorted.length / 2)]!)} ms, max ${Math.round(sorted[sorted.length - 1]!)} ms (after the audio, on top of it)`);
}

function sweep(samples: readonly AmdSample[]): void {
  const spans = [2200, 3000, 3800, 4200, 4500, 5000];
  console.log('\nsweep: correct within 3 s / people taken for machines (fm) / machines taken for people (mh)');
  console.log(`  humanPauseMs \\ machineSpanMs ${spans.map((s) => String(s).padStart(16)).join('')}`);
  for (const humanPauseMs of [800, 900, 1000, 1100, 1200]) {
    const cells = spans.map((machineSpanMs) => {
      const s = summarise(classify(samples, { humanPauseMs, machineSpanMs }));
      return `${s.correctInBudget}/${s.total} fm${s.table.human.machine} mh${s.table.machine.human}`.padStart(16);
    });
    console.log(`  ${String(humanPauseMs).padEnd(29)}${cells.join('')}`);
  }
}

function report(split: AmdSplit, samples: readonly AmdSample[]): void {
  const started = performance.now();
  const rows = classify(samples);
  const cpuMs = performance.now() - started;
  console.log(`\n${split.toUpperCase()} split, ${samples.length} items, defaults (detector CPU: ${(cpuMs / samples.length).toFixed(1)} ms per item of ${Math.round(samples[0]!.pcm.length / 8000)}+ s)`);
  for (const line of confusionLines(rows)) console.log(`  ${line}`);
  console.log('');
  for (const r of rows) console.log(`  ${r.verdict === r.truth && r.afterMs <= 3000 ? ' ' : 'x'} ${r.name.padEnd(46)} ${r.truth.padEnd(8)} -> ${r.verdict.padEnd(8)} ${String(r.afterMs).padStart(5)} ms  ${r.reason}`);
}

async function main(): Promise<void> {
  console.log(`amd-confusion: ${cpus().length} cores, load ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  const which = arg('split', 'both');
  const splits: AmdSplit[] = which === 'both' ? ['tuning', 'heldout'] : [which as AmdSplit];
  const sets = new Map<AmdSplit, AmdSample[]>();
  for (const split of splits) {
    const built = performance.now();
    console.log(`building or reading the ${split} split (first build ~10-30 s: flite, espeak-ng, Festival, sox) ...`);
    sets.set(split, await amdSplit(split));
    console.log(`${sets.get(split)!.length} items ready in ${Math.round(performance.now() - built)} ms`);
  }
  for (const [split, samples] of sets) report(split, samples);
  const tuning = sets.get('tuning');
  // The sweep is a tuning tool: it never runs on the held-out split.
  if (tuning && !flag('no-sweep')) sweep(tuning);
  if (tuning && flag('cue-words')) await cueWords(tuning, Number(arg('cue-ms', '2600')));
}

await main();
