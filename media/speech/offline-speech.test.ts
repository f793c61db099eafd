import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { pcmu } from '../codecs/g711.js';
import { decodeWav } from '../wav/wav.js';
import { EspeakTts, espeakVoiceFor } from './espeak-tts.js';
import { buildGrammar, PocketsphinxStt } from './pocketsphinx-stt.js';
import { noiseSeeds, speechSpan, withLineNoise } from './recogniser-audio.js';

const run = promisify(execFile);

async function synthesize(text: string, language = 'en-US'): Promise<Int16Array> {
  const chunks: Int16Array[] = [];
  for await (const c of new EspeakTts().synthesize({ text, voice: '', language, signal: new AbortController().signal })) chunks.push(c);
  const out = new Int16Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

async function recognise(pcm: Int16Array, keywords: string[]): Promise<string> {
  const stream = await new PocketsphinxStt().open({ language: 'en-US', keywords, signal: new AbortController().signal });
  for (let i = 0; i < pcm.length; i += 160) stream.push(pcm.subarray(i, i + 160));
  return stream.finish();
}

describe('offline speech (espeak-ng TTS, pocketsphinx STT from Debian)', function () {
  this.timeout(20_000);

  it('espeak-ng streams 8 kHz audio whose length fits the text', async () => {
    const pcm = await synthesize('Hello, this is the clinic calling about your appointment.');
    const seconds = pcm.length / 8000;
    assert.ok(seconds > 2 && seconds < 6, `${seconds} s of speech`);
    assert.ok(pcm.some((s) => Math.abs(s) > 3000), 'audible');
  });

  it('picks espeak-ng voices from language tags, Indian languages included', () => {
    assert.equal(espeakVoiceFor('en-US'), 'en-us');
    assert.equal(espeakVoiceFor('hi-IN'), 'hi');
    assert.equal(espeakVoiceFor('ta'), 'ta');
  });

  it('speaks Hindi (Devanagari) text', async () => {
    const pcm = await synthesize('नमस्ते, आप कैसे हैं?', 'hi-IN');
    assert.ok(pcm.length > 8000 * 0.5);
  });

  it('stops synthesis when the signal aborts (the process is killed)', async () => {
    const ac = new AbortController();
    let n = 0;
    for await (const c of new EspeakTts().synthesize({ text: 'word '.repeat(400), voice: '', language: 'en', signal: ac.signal })) {
      n += c.length;
      ac.abort();
    }
    assert.ok(n < 8000 * 10, `${n} samples before stopping`);
  });

  it('recognises a flite caller answer on 8 kHz telephony audio with a keyword grammar', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'vap-stt-'));
    try {
      await run('flite', ['-t', 'yes I will come tomorrow', '-o', join(dir, 'c.wav')]);
      const pcm = decodeWav(await readFile(join(dir, 'c.wav')));
      const text = await recognise(pcm, ['come', 'tomorrow', 'cancel']);
      assert.match(text, /\byes\b/);
      assert.match(text, /\btomorrow\b/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('hears a bare "Yes" over G.711 (its /s/ cut at 4 kHz) as yes, with a yes/no expectation', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'vap-stt-'));
    try {
      await run('flite', ['-voice', 'slt', '-t', 'Yes', '-o', join(dir, 'y.wav')]);
      const speech = decodeWav(await readFile(join(dir, 'y.wav')));
      const line = new Int16Array(speech.length + 4800);
      line.set(speech, 1600);
      const coded = new Uint8Array(line.length);
      pcmu.encode(line, coded);
      const expectation = { phrases: [{ name: 'yes', phrases: ['yes', 'yeah'], neutral: true }, { name: 'no', phrases: ['no', 'nope'], neutral: true }], values: [] };
      const stream = await new PocketsphinxStt().open({ language: 'en-US', keywords: [], expectation, signal: new AbortController().signal });
      let meaning: string | undefined;
      stream.onTranscript((t) => (meaning = t.meaning));
      const pcm = pcmu.decode(coded);
      for (let i = 0; i < pcm.length; i += 160) stream.push(pcm.subarray(i, i + 160));
      await stream.finish();
      assert.equal(meaning, 'yes');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('tells which of the expected sentences the agent (espeak-ng) said, with a phrase grammar', async () => {
    const phrases = ['will you attend your appointment tomorrow', 'your appointment is cancelled', 'goodbye'];
    const stt = new PocketsphinxStt({ phrases });
    for (const [said, expected] of [['Will you attend your appointment tomorrow?', /attend/], ['Your appointment is cancelled.', /cancelled/]] as const) {
      const pcm = await synthesize(said);
      const stream = await stt.open({ language: 'en-US', keywords: [], signal: new AbortController().signal });
      for (let i = 0; i < pcm.length; i += 160) stream.push(pcm.subarray(i, i + 160));
      assert.match(await stream.finish(), expected);
    }
  });

  it('decodes the speech span only: 30 ms before the first loud frame, 150 ms after the last', () => {
    const pcm = new Int16Array(8000 * 2);
    for (let i = 0; i < pcm.length; i++) pcm[i] = (i % 7) - 3; // line hiss, about -80 dB
    for (let i = 4000; i < 8000; i++) pcm[i] = Math.round(8000 * Math.sin(i / 3)); // 0.5 to 1 s: speech
    const span = speechSpan(pcm);
    assert.equal(span.byteOffset / 2, 4000 - 240);
    assert.equal(span.length, 240 + 4000 + 1200);
    const quiet = new Int16Array(800);
    assert.equal(speechSpan(quiet).length, quiet.length, 'nothing but silence: left whole');
    assert.equal(speechSpan(new Int16Array(0)).length, 0);
  });

  it('fills what a phone line does not carry: a hiss in 4-8 kHz over a floor a third as loud, the same for a seed', () => {
    const silence = new Int16Array(16000);
    const noisy = withLineNoise(silence, 7, 0.0024, 0.0008);
    /** Mean power of the band [from, to) Hz by a plain DFT over 32 ms blocks. */
    const band = (pcm: Int16Array, from: number, to: number): number => {
      const n = 512;
      let sum = 0;
      let bins = 0;
      for (let at = 0; at + n <= pcm.length; at += n) {
        for (let k = Math.ceil((from * n) / 16000); k < (to * n) / 16000; k++) {
          let re = 0;
          let im = 0;
          for (let t = 0; t < n; t++) {
            re += pcm[at + t]! * Math.cos((2 * Math.PI * k * t) / n);
            im -= pcm[at + t]! * Math.sin((2 * Math.PI * k * t) / n);
          }
          sum += re * re + im * im;
          bins++;
        }
      }
      return sum / bins;
    };
    const upper = band(noisy, 5000, 7500);
    const speechBand = band(noisy, 300, 3400);
    assert.ok(upper > 4 * speechBand, `upper ${upper.toExponential(2)} vs speech band ${speechBand.toExponential(2)}`);
    assert.ok(speechBand > 0, 'a floor under the speech too');
    assert.deepEqual(withLineNoise(silence, 7, 0.0024, 0.0008), noisy, 'the same audio is always heard the same way');
    assert.notDeepEqual(withLineNoise(silence, noiseSeeds[1]!, 0.0024, 0.0008), withLineNoise(silence, noiseSeeds[0]!, 0.0024, 0.0008));
  });

  it('builds grammars only from words the dictionary knows', () => {
    const g = buildGrammar(['Yes please', 'zzqx'], new Set(['yes', 'please']));
    assert.ok(g?.includes('please | yes'));
    assert.ok(!g?.includes('zzqx'));
  });
});
