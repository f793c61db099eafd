import assert from 'node:assert/strict';
import { metricsRegistry } from '../../core/metrics.js';
import { EARLY_DECODE_QUIET_MS, OfflineUtterance, type Reading } from './offline-utterance.js';
import { speechSpanBounds, upperBandDb } from './recogniser-audio.js';
import { upsample2x } from './resampler.js';

/** 20 ms frames of a loud tone (speech to the span's measure) or of near silence. */
const frame = (loud: boolean): Int16Array => Int16Array.from({ length: 160 }, (_, i) => (loud ? Math.round(8000 * Math.sin(i / 3)) : (i % 5) - 2));
const frames = (loud: boolean, ms: number): Int16Array[] => Array.from({ length: ms / 20 }, () => frame(loud));

const early = async (outcome: string): Promise<number> =>
  (await metricsRegistry.getSingleMetric('vap_recogniser_early_readings_total')?.get())?.values.find((v) => v.labels['outcome'] === outcome)?.value ?? 0;

/** A recogniser that records what it was asked to decode and answers when told to. */
function recorder(options: { spare?: boolean } = {}) {
  const calls: { samples: number; signal: AbortSignal; answer: (r: Reading) => void }[] = [];
  const utterance = new OfflineUtterance({
    signal: new AbortController().signal,
    realisations: 1,
    noiseLevel: 0.0024,
    mayDecodeEarly: () => options.spare ?? true,
    recognise: ([pcm], signal) =>
      new Promise<Reading>((resolve) => {
        calls.push({ samples: pcm!.length, signal, answer: resolve });
      }),
  });
  return { utterance, calls };
}

describe('offline utterance: a turn decoded early, while the endpointer waits out its silence', () => {
  it(`decodes once the caller has been quiet ${EARLY_DECODE_QUIET_MS} ms, and finish uses that reading when the span did not change`, async () => {
    const { utterance, calls } = recorder();
    const used = await early('used');
    const heard: string[] = [];
    utterance.onTranscript((t) => heard.push(t.text));
    for (const f of [...frames(false, 100), ...frames(true, 600), ...frames(false, EARLY_DECODE_QUIET_MS + 100)]) utterance.push(f);
    assert.equal(calls.length, 1, 'decoding started before the end of the turn');
    // The endpointer's silence goes on: more quiet audio changes nothing.
    for (const f of frames(false, 400)) utterance.push(f);
    assert.equal(calls.length, 1);
    calls[0]!.answer({ text: 'yes', confidence: 1, meaning: 'yes' });
    assert.equal(await utterance.finish(), 'yes');
    assert.equal(calls.length, 1, 'not decoded again');
    assert.deepEqual(heard, ['yes']);
    assert.equal(await early('used'), used + 1);
    // The span: 30 ms before the first loud frame to 150 ms after the last, at 16 kHz.
    assert.equal(calls[0]!.samples, (30 + 600 + 150) * 16);
  });

  it('drops the early reading when speech comes back, and decodes the whole turn at its end', async () => {
    const { utterance, calls } = recorder();
    const dropped = await early('dropped');
    for (const f of [...frames(true, 400), ...frames(false, EARLY_DECODE_QUIET_MS + 60)]) utterance.push(f);
    assert.equal(calls.length, 1);
    for (const f of [...frames(true, 300), ...frames(false, 200)]) utterance.push(f);
    assert.ok(calls[0]!.signal.aborted, 'the early decoding is stopped');
    const finished = utterance.finish();
    await Promise.resolve();
    assert.equal(calls.length, 2);
    assert.ok(calls[1]!.samples > calls[0]!.samples, 'the second decoding has the words said after the pause');
    calls[1]!.answer({ text: 'no thanks', confidence: 1, meaning: 'no' });
    assert.equal(await finished, 'no thanks');
    assert.equal(await early('dropped'), dropped + 1);
  });

  it('does not decode early when the recogniser has no worker to spare', async () => {
    const { utterance, calls } = recorder({ spare: false });
    for (const f of [...frames(true, 400), ...frames(false, 700)]) utterance.push(f);
    assert.equal(calls.length, 0);
    const finished = utterance.finish();
    await Promise.resolve();
    assert.equal(calls.length, 1);
    calls[0]!.answer({ text: 'bye', confidence: 1, meaning: 'intent:goodbye' });
    assert.equal(await finished, 'bye');
  });

  it('returns nothing after abort, and stops the decoding under way', async () => {
    const { utterance, calls } = recorder();
    for (const f of [...frames(true, 400), ...frames(false, 700)]) utterance.push(f);
    utterance.abort();
    assert.ok(calls[0]!.signal.aborted);
    assert.equal(await utterance.finish(), '');
  });

  it('a wideband (G.722) turn reaches the recogniser as its own 16 kHz audio, not the 8 kHz frames upsampled', async () => {
    const decoded: Int16Array[] = [];
    const utterance = new OfflineUtterance({
      signal: new AbortController().signal,
      realisations: 1,
      noiseLevel: 0,
      mayDecodeEarly: () => false,
      recognise: async ([pcm]) => (decoded.push(pcm!), { text: '', confidence: 0, meaning: '' }),
    });
    // A 6 kHz tone: in the 16 kHz original, absent from the 8 kHz frames (above their band).
    const wide = (loud: boolean): Int16Array => Int16Array.from({ length: 320 }, (_, i) => (loud ? Math.round(6000 * Math.sin((2 * Math.PI * 6000 * i) / 16000)) : 0));
    const all = [...frames(false, 100).map((f) => [f, wide(false)] as const), ...frames(true, 400).map((f) => [f, wide(true)] as const), ...frames(false, 300).map((f) => [f, wide(false)] as const)];
    for (const [narrow, original] of all) utterance.push(narrow, original);
    await utterance.finish();
    const pcm = decoded[0]!;
    // Exactly the 16 kHz samples sent over the turn's speech span (no noise at level 0).
    const sent = Int16Array.from(all.flatMap(([, w]) => [...w]));
    const span = speechSpanBounds(Int16Array.from(all.flatMap(([n]) => [...n])));
    assert.deepEqual(pcm, sent.subarray(2 * span.start, 2 * span.end));
    // A turn with one frame lacking its 16 kHz original falls back to the 8 kHz path whole.
    const mixed: Int16Array[] = [];
    const other = new OfflineUtterance({ signal: new AbortController().signal, realisations: 1, noiseLevel: 0, mayDecodeEarly: () => false, recognise: async ([p]) => (mixed.push(p!), { text: '', confidence: 0, meaning: '' }) });
    all.forEach(([narrow, original], i) => other.push(narrow, i === 3 ? undefined : original));
    await other.finish();
    assert.equal(mixed[0]!.length, pcm.length);
    assert.notDeepEqual(mixed[0], pcm);
  });

  it('a G.722 turn with nothing in its upper band (narrowband before the G.722 leg) takes the 8 kHz path', async () => {
    const decoded: Int16Array[] = [];
    const utterance = new OfflineUtterance({ signal: new AbortController().signal, realisations: 1, noiseLevel: 0, mayDecodeEarly: () => false, recognise: async ([p]) => (decoded.push(p!), { text: '', confidence: 0, meaning: '' }) });
    // A 500 Hz tone at 16 kHz: speech with a dead upper band.
    const low = (loud: boolean): Int16Array => Int16Array.from({ length: 320 }, (_, i) => (loud ? Math.round(6000 * Math.sin((2 * Math.PI * 500 * i) / 16000)) : 0));
    const all = [...frames(false, 100).map((f) => [f, low(false)] as const), ...frames(true, 400).map((f) => [f, low(true)] as const), ...frames(false, 300).map((f) => [f, low(false)] as const)];
    assert.ok(upperBandDb(Int16Array.from(all.flatMap(([, w]) => [...w]))) < -40);
    for (const [narrow, original] of all) utterance.push(narrow, original);
    await utterance.finish();
    const span = speechSpanBounds(Int16Array.from(all.flatMap(([n]) => [...n])));
    assert.deepEqual(decoded[0], upsample2x(Int16Array.from(all.flatMap(([n]) => [...n])).subarray(span.start, span.end)));
  });
});
