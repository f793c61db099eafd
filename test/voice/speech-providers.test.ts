import assert from 'node:assert/strict';
import { AzureTts, ElevenLabsTts } from '../../media/speech/http-tts.js';
import { DeepgramStt } from '../../media/speech/deepgram-stt.js';
import { FallbackStt, FallbackTts } from '../../media/speech/fallback.js';
import { SpeechProviderError, type Transcript, type TtsProvider } from '../../media/speech/speech-provider.js';
import { startFakeDeepgram, type FakeDeepgram } from '../fakes/fake-deepgram.js';
import { startFakeTtsServer, type FakeTtsServer } from '../fakes/fake-tts-servers.js';

const tone = (n: number): Int16Array => Int16Array.from({ length: n }, (_, i) => Math.round(6000 * Math.sin((2 * Math.PI * 300 * i) / 8000)));

async function collect(source: AsyncIterable<Int16Array>): Promise<Int16Array[]> {
  const out: Int16Array[] = [];
  for await (const c of source) out.push(c);
  return out;
}
const samplesOf = (chunks: Int16Array[]): number => chunks.reduce((n, c) => n + c.length, 0);

describe('Deepgram live STT adapter (loopback fake speaking the WebSocket protocol)', () => {
  let fake: FakeDeepgram;
  beforeEach(async () => {
    fake = await startFakeDeepgram({ apiKey: 'dg-key', transcriptFor: (bytes) => (bytes >= 16000 ? 'yes I will come tomorrow' : 'yes') });
  });
  afterEach(() => fake.close());

  it('streams linear16 at 8 kHz with language and boosted keywords, gets interim and final transcripts', async () => {
    const stt = new DeepgramStt({ apiKey: 'dg-key', baseUrl: fake.url });
    const stream = await stt.open({ language: 'en-IN', keywords: ['Verloop', 'EMI'], signal: new AbortController().signal });
    const seen: Transcript[] = [];
    stream.onTranscript((t) => seen.push(t));
    for (let i = 0; i < 60; i++) stream.push(tone(160));
    const text = await stream.finish();
    assert.equal(text, 'yes I will come tomorrow');
    const q = fake.connections[0]!;
    assert.equal(q.get('language'), 'en-IN');
    assert.deepEqual(q.getAll('keyterm'), ['Verloop', 'EMI']);
    assert.equal(q.get('channels'), '1');
    assert.equal(fake.audioBytes[0], 60 * 160 * 2);
    assert.ok(seen.some((t) => !t.final), 'an interim transcript arrived');
    assert.ok(seen.some((t) => t.final && t.text === 'yes I will come tomorrow'));
  });

  it('maps a refused handshake to a provider error: 401 final, 503 retryable', async () => {
    await assert.rejects(new DeepgramStt({ apiKey: 'wrong', baseUrl: fake.url }).open({ language: 'en', keywords: [], signal: new AbortController().signal }), (e: unknown) => {
      assert.ok(e instanceof SpeechProviderError);
      assert.equal(e.retryable, false);
      assert.match(e.message, /401/);
      return true;
    });
    const busy = await startFakeDeepgram({ apiKey: 'k', transcriptFor: () => '', refuseWith: 503 });
    try {
      await assert.rejects(new DeepgramStt({ apiKey: 'k', baseUrl: busy.url }).open({ language: 'en', keywords: [], signal: new AbortController().signal }), (e: unknown) => e instanceof SpeechProviderError && e.retryable);
    } finally {
      await busy.close();
    }
  });

  it('falls back to the next STT provider when the first is unavailable', async () => {
    const busy = await startFakeDeepgram({ apiKey: 'k', transcriptFor: () => 'never', refuseWith: 429 });
    try {
      const stt = new FallbackStt([new DeepgramStt({ apiKey: 'k', baseUrl: busy.url }), new DeepgramStt({ apiKey: 'dg-key', baseUrl: fake.url })]);
      const stream = await stt.open({ language: 'en', keywords: [], signal: new AbortController().signal });
      for (let i = 0; i < 5; i++) stream.push(tone(160));
      assert.equal(await stream.finish(), 'yes');
    } finally {
      await busy.close();
    }
  });
});

describe('HTTP streaming TTS adapters (loopback fakes of ElevenLabs and Azure)', () => {
  let fake: FakeTtsServer;
  beforeEach(async () => {
    fake = await startFakeTtsServer('tts-key');
  });
  afterEach(() => fake.close());

  it('ElevenLabs: voice in the path, ulaw_8000, 8 kHz PCM out streamed in chunks', async () => {
    const tts = new ElevenLabsTts({ apiKey: 'tts-key', baseUrl: fake.url });
    const chunks = await collect(tts.synthesize({ text: 'Hello there', voice: 'voice-123', language: 'en-IN', signal: new AbortController().signal }));
    assert.deepEqual(fake.requests[0], { provider: 'elevenlabs', voice: 'voice-123', text: 'Hello there', format: 'ulaw_8000' });
    assert.ok(chunks.length > 1, 'streamed, not one blob');
    assert.equal(samplesOf(chunks), Math.round((8000 * 11 * 80) / 1000));
    assert.ok(Math.max(...chunks.flatMap((c) => [...c])) > 6000, 'the tone came through mu-law decoding');
  });

  it('Azure: SSML with the voice, escaped text, 16 kHz PCM resampled to 8 kHz', async () => {
    const tts = new AzureTts({ apiKey: 'tts-key', baseUrl: fake.url });
    const chunks = await collect(tts.synthesize({ text: 'Tom & Jerry <3', voice: 'en-IN-NeerjaNeural', language: 'en-IN', signal: new AbortController().signal }));
    assert.deepEqual(fake.requests[0], { provider: 'azure', voice: 'en-IN-NeerjaNeural', text: 'Tom & Jerry <3', format: 'raw-16khz-16bit-mono-pcm' });
    const expected = Math.round((8000 * 14 * 80) / 1000);
    assert.ok(Math.abs(samplesOf(chunks) - expected) <= 40, `got ${samplesOf(chunks)} samples, want ~${expected}`);
  });

  it('cancels: aborting mid-stream ends the audio without an error', async () => {
    const tts = new AzureTts({ apiKey: 'tts-key', baseUrl: fake.url });
    const ac = new AbortController();
    let n = 0;
    for await (const c of tts.synthesize({ text: 'x'.repeat(200), voice: 'v', language: 'en', signal: ac.signal })) {
      n += c.length;
      ac.abort();
    }
    assert.ok(n > 0 && n < 8000 * 16, `stopped early after ${n} samples`);
  });

  it('maps statuses: 401 is final, 503 falls back to the next provider before any audio', async () => {
    fake.failWith = 401;
    await assert.rejects(collect(new ElevenLabsTts({ apiKey: 'tts-key', baseUrl: fake.url }).synthesize({ text: 'a', voice: 'v', language: 'en', signal: new AbortController().signal })), (e: unknown) => e instanceof SpeechProviderError && !e.retryable);
    fake.failWith = 503;
    const second = await startFakeTtsServer('other');
    try {
      const tts = new FallbackTts([new ElevenLabsTts({ apiKey: 'tts-key', baseUrl: fake.url }), new AzureTts({ apiKey: 'other', baseUrl: second.url })]);
      const chunks = await collect(tts.synthesize({ text: 'hello', voice: 'v', language: 'en', signal: new AbortController().signal }));
      assert.ok(samplesOf(chunks) > 0);
      assert.equal(second.requests.length, 1);
    } finally {
      await second.close();
    }
  });

  it('does not fall back once audio was produced (no voice switch mid-sentence)', async () => {
    let secondCalled = false;
    const broken: TtsProvider = {
      name: 'broken',
      async *synthesize() {
        yield tone(160);
        throw new SpeechProviderError('broken', 'connection reset', true);
      },
    };
    const second: TtsProvider = {
      name: 'second',
      async *synthesize() {
        secondCalled = true;
        yield tone(160);
      },
    };
    await assert.rejects(collect(new FallbackTts([broken, second]).synthesize({ text: 'a', voice: 'v', language: 'en', signal: new AbortController().signal })), /connection reset/);
    assert.equal(secondCalled, false);
  });
});

describe('speech profile -> provider', () => {
  it('uses the profile cloud provider when configured, espeak-ng behind it and otherwise', async () => {
    const { ttsForProfile, sttFor } = await import('../../media/speech/provider-registry.js');
    assert.equal(ttsForProfile({ provider: 'elevenlabs', voiceName: 'v1', language: 'en-IN' }, { elevenlabs: { apiKey: 'k' } }).tts.name, 'elevenlabs>espeak-ng');
    assert.equal(ttsForProfile({ provider: 'azure', voiceName: 'en-IN-NeerjaNeural', language: 'en-IN' }, { azure: { apiKey: 'k' } }).voice, 'en-IN-NeerjaNeural');
    const noKey = ttsForProfile({ provider: 'elevenlabs', voiceName: 'v1', language: 'en-IN' });
    assert.equal(noKey.tts.name, 'espeak-ng');
    assert.equal(noKey.voice, '', 'a cloud voice id is not passed to espeak-ng');
    assert.equal(sttFor({ deepgram: { apiKey: 'k' } }).name, 'deepgram>pocketsphinx');
    assert.equal(sttFor().name, 'pocketsphinx');
  });

  it('a speech profile on a failing cloud still speaks through espeak-ng', async () => {
    const { ttsForProfile } = await import('../../media/speech/provider-registry.js');
    const down = await startFakeTtsServer('k');
    down.failWith = 503;
    try {
      const { tts, voice } = ttsForProfile({ provider: 'azure', voiceName: 'en-US-JennyNeural', language: 'en-US' }, { azure: { apiKey: 'k', baseUrl: down.url } });
      const chunks = await collect(tts.synthesize({ text: 'Hello there.', voice, language: 'en-US', signal: new AbortController().signal }));
      assert.equal(down.requests.length, 1);
      assert.ok(samplesOf(chunks) > 4000, 'espeak-ng spoke');
    } finally {
      await down.close();
    }
  });
});
