import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { metricsRegistry } from '../../../core/metrics.js';
import { pcmu } from '../../codecs/g711.js';
import { decodeWav } from '../../wav/wav.js';
import { PocketsphinxStt } from '../pocketsphinx-stt.js';
import { upsample2x } from '../resampler.js';
import { RecogniserPool } from './recogniser-pool.js';

const run = promisify(execFile);

/** flite's voice saying `text`, over G.711 as a caller is heard (8 kHz). */
async function caller(text: string, voice = 'slt'): Promise<Int16Array> {
  const dir = await mkdtemp(join(tmpdir(), 'vap-pool-'));
  try {
    await run('flite', ['-voice', voice, '-t', text, '-o', join(dir, 'say.wav')]);
    const speech = decodeWav(await readFile(join(dir, 'say.wav')));
    const line = new Int16Array(speech.length + 4800);
    line.set(speech, 1600);
    const coded = new Uint8Array(line.length);
    pcmu.encode(line, coded);
    return pcmu.decode(coded);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** 16 kHz audio for a direct decode, with a little hiss so the model hears a line, not digital silence. */
const at16k = (pcm8k: Int16Array): Int16Array => upsample2x(pcm8k).map((s, i) => s + ((i * 7919) % 23) - 11);
const grammar = (words: string): string => `#JSGF V1.0;\ngrammar g;\npublic <u> = (${words.split(' ').join(' | ')})+;\n`;
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const restarts = async (reason: string): Promise<number> =>
  (await metricsRegistry.getSingleMetric('vap_recogniser_worker_restarts_total')?.get())?.values.find((v) => v.labels['reason'] === reason)?.value ?? 0;
const until = async (check: () => boolean, what: string, ms = 20_000): Promise<void> => {
  for (const deadline = Date.now() + ms; !check(); await new Promise((r) => setTimeout(r, 10))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
  }
};

describe('offline recogniser pool (long-lived pocketsphinx workers, Debian python3-pocketsphinx)', function () {
  // Real decoders on a machine that may be busy: generous, never a speed assertion.
  this.timeout(60_000);
  let yes: Int16Array;
  let cancel: Int16Array;
  before(async () => {
    yes = at16k(await caller('yes'));
    cancel = at16k(await caller('cancel'));
  });

  it('switches grammars per request without reloading: each grammar compiled once, the same worker throughout', async () => {
    const pool = new RecogniserPool({ size: 1 });
    try {
      const signal = new AbortController().signal;
      const a = { jsgf: grammar('yes no') };
      const b = { jsgf: grammar('cancel reschedule') };
      const first = await pool.decode({ search: a, pcm: yes }, signal);
      const [pid] = pool.workerPids();
      const second = await pool.decode({ search: b, pcm: cancel }, signal);
      const third = await pool.decode({ search: a, pcm: yes }, signal);
      assert.equal(first?.text, 'yes');
      assert.equal(second?.text, 'cancel');
      assert.equal(third?.text, 'yes');
      assert.deepEqual([first?.compiled, second?.compiled, third?.compiled], [true, true, false], 'grammar A kept while B was used');
      assert.deepEqual(pool.workerPids(), [pid], 'one process, its model loaded once');
      assert.equal(third?.score, first?.score, 'the same audio is decoded the same way, whatever came between');
      assert.ok(first!.segments.some((s) => s.word === 'yes' && s.endFrame > s.startFrame), 'word timings of the best path');
      assert.ok(first!.frames > 0 && first!.wordPenalty < 0);
    } finally {
      await pool.stop();
    }
  });

  it('gives the competing reading of a turn (the grammar without the winning meaning) with its score gap', async () => {
    const pool = new RecogniserPool({ size: 2 });
    try {
      const expectation = {
        phrases: [
          { name: 'yes', phrases: ['yes', 'yeah'], neutral: true },
          { name: 'no', phrases: ['no', 'nope'], neutral: true },
          { name: 'intent:cancel', phrases: ['cancel', 'cancel it'] },
          { name: 'intent:reschedule', phrases: ['reschedule', 'another day'] },
        ],
        values: [],
      };
      const stream = await new PocketsphinxStt({ pool }).open({ language: 'en-US', keywords: [], expectation, signal: new AbortController().signal });
      let meaning: string | undefined;
      let alternatives: readonly { text: string; scoreGap?: number }[] = [];
      stream.onTranscript((t) => {
        meaning = t.meaning;
        alternatives = t.alternatives ?? [];
      });
      const pcm = await caller('can I reschedule');
      for (let i = 0; i < pcm.length; i += 160) stream.push(pcm.subarray(i, i + 160));
      await stream.finish();
      assert.equal(meaning, 'intent:reschedule');
      const rival = alternatives.find((a) => a.scoreGap !== 0);
      assert.ok(rival, `a reading without "reschedule": ${JSON.stringify(alternatives)}`);
      assert.doesNotMatch(rival.text, /\breschedule\b/);
      assert.ok(rival.scoreGap! > 0, 'the audio fits the reading with its meaning better');
    } finally {
      await pool.stop();
    }
  });

  it('restarts a worker that dies mid-turn and decodes that turn again on the new one', async () => {
    const pool = new RecogniserPool({ size: 1 });
    try {
      await pool.start();
      const [pid] = pool.workerPids();
      const before = await restarts('crash-in-decode');
      // Ten seconds of speech: the decode is still running when the worker is killed.
      const long = new Int16Array(yes.length * 12);
      for (let i = 0; i < 12; i++) long.set(yes, i * yes.length);
      const decoding = pool.decode({ search: { jsgf: grammar('yes no maybe') }, pcm: long }, new AbortController().signal);
      await until(() => pool.load().busy === 1, 'the turn to reach the worker');
      process.kill(pid!, 'SIGKILL');
      const result = await decoding;
      assert.match(result?.text ?? '', /^(yes ?)+$/, 'the turn was decoded by the new worker');
      assert.equal(await restarts('crash-in-decode'), before + 1);
      assert.equal(pool.workerPids().length, 1);
      assert.notEqual(pool.workerPids()[0], pid);
      assert.ok(!alive(pid!));
    } finally {
      await pool.stop();
    }
  });

  it('kills a decode that runs past its deadline, fails it, and starts the worker again', async () => {
    const pool = new RecogniserPool({ size: 1, decodeTimeoutMs: 1 });
    try {
      await pool.start();
      const [pid] = pool.workerPids();
      await assert.rejects(pool.decode({ search: { jsgf: grammar('yes no') }, pcm: yes }, new AbortController().signal), /recognition timed out/);
      await until(() => pool.workerPids().length === 1 && pool.workerPids()[0] !== pid, 'a new worker');
    } finally {
      await pool.stop();
    }
  });

  it('leaves no process behind when it stops; a request after that is refused', async () => {
    const pool = new RecogniserPool({ size: 2 });
    await pool.start();
    await until(() => pool.workerPids().length === 2, 'two workers');
    const pids = pool.workerPids();
    await pool.stop();
    assert.deepEqual(pids.filter(alive), []);
    await assert.rejects(pool.decode({ search: { jsgf: grammar('yes') }, pcm: yes }, new AbortController().signal), /shutting down/);
  });

  it('returns nothing for a turn aborted before or while it waits, and the queue depth shows what waits', async () => {
    const pool = new RecogniserPool({ size: 1 });
    try {
      const aborted = new AbortController();
      aborted.abort();
      assert.equal(await pool.decode({ search: { jsgf: grammar('yes') }, pcm: yes }, aborted.signal), undefined);
      await pool.start();
      const busy = pool.decode({ search: { jsgf: grammar('yes no') }, pcm: yes }, new AbortController().signal);
      const dropped = new AbortController();
      const waiting = pool.decode({ search: { jsgf: grammar('yes no') }, pcm: yes }, dropped.signal);
      assert.deepEqual(pool.load(), { queued: 1, busy: 1, workers: 1 });
      assert.equal(pool.queueDepth(), 1);
      dropped.abort();
      assert.equal(await waiting, undefined);
      assert.equal(pool.queueDepth(), 0);
      assert.equal((await busy)?.text, 'yes');
      // The STT stream of a turn the caller abandoned (barge-in, hang-up): finish gives nothing.
      const stream = await new PocketsphinxStt({ pool }).open({ language: 'en-US', keywords: [], signal: new AbortController().signal });
      stream.push(new Int16Array(8000).fill(1000));
      stream.abort();
      assert.equal(await stream.finish(), '');
    } finally {
      await pool.stop();
    }
  });

  it('says why when no worker can start (Python without pocketsphinx, or no Python at all)', async () => {
    const pool = new RecogniserPool({ size: 1, python: '/nonexistent/python3' });
    try {
      await assert.rejects(pool.start(), /did not start: could not start \/nonexistent\/python3/);
      await assert.rejects(pool.decode({ search: { jsgf: grammar('yes') }, pcm: yes }, new AbortController().signal), /could not start/);
    } finally {
      await pool.stop();
    }
  });
});
