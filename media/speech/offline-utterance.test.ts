import assert from 'node:assert/strict';
import { metricsRegistry } from '../../core/metrics.js';
import { EARLY_DECODE_QUIET_MS, OfflineUtterance, type Reading } from './offline-utterance.js';

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
});
