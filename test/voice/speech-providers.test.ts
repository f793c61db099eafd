import assert from 'node:assert/strict';
import { AzureTts, ElevenLabsTts } from '../../media/speech/http-tts.js';
import { DeepgramStt } from '../../media/speech/deepgram-stt.js';
import { FallbackStt, FallbackTts, type ProviderFallback } from '../../media/speech/fallback.js';
import { sttForLanguage, ttsForProfile } from '../../media/speech/provider-registry.js';
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
    assert.ok(seen.every((t) => t.confidence === 0.98), 'the first alternative\'s confidence travels on each Transcript');
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

  it('a stream cut mid-sentence is spoken again from its start by the next provider, and reported', async () => {
    const said: string[] = [];
    const broken: TtsProvider = {
      name: 'broken',
      async *synthesize() {
        yield tone(160);
        throw new SpeechProviderError('broken', 'stream broke: terminated', true);
      },
    };
    const second: TtsProvider = {
      name: 'second',
      async *synthesize({ text }) {
        said.push(text);
        yield tone(320);
      },
    };
    const events: ProviderFallback[] = [];
    const chunks = await collect(new FallbackTts([broken, second], { onFallback: (e) => events.push(e) }).synthesize({ text: 'Your order is 123456.', voice: 'v', language: 'en', signal: new AbortController().signal }));
    assert.deepEqual(said, ['Your order is 123456.'], 'the whole sentence, not its unknown rest');
    assert.equal(samplesOf(chunks), 160 + 320);
    assert.deepEqual(events, [{ kind: 'tts', from: 'broken', to: 'second', reason: 'broken: stream broke: terminated', forRestOfCall: false, noneLeft: false, midStream: true }]);
  });

  it('a non-transient failure (401) drops the provider for the rest of the call; a transient one only for that sentence', async () => {
    const offline: TtsProvider = {
      name: 'offline',
      async *synthesize() {
        yield tone(160);
      },
    };
    const say = (tts: FallbackTts) => collect(tts.synthesize({ text: 'hello', voice: 'v', language: 'en', signal: new AbortController().signal }));
    fake.failWith = 401;
    const events: ProviderFallback[] = [];
    const refused = new FallbackTts([new ElevenLabsTts({ apiKey: 'tts-key', baseUrl: fake.url }), offline], { onFallback: (e) => events.push(e) });
    for (let i = 0; i < 3; i++) assert.equal(samplesOf(await say(refused)), 160);
    assert.equal(fake.requests.length, 1, 'the refused provider was asked once');
    assert.equal(events.length, 1);
    assert.equal(events[0]!.forRestOfCall, true);
    assert.match(events[0]!.reason, /HTTP 401/);

    fake.failWith = 503;
    const busy = new FallbackTts([new ElevenLabsTts({ apiKey: 'tts-key', baseUrl: fake.url }), offline]);
    await say(busy);
    fake.failWith = undefined;
    await say(busy);
    assert.equal(fake.requests.length, 3, 'after a 503 the next sentence tries the cloud again');

    fake.failWith = 503;
    const flapping = new FallbackTts([new ElevenLabsTts({ apiKey: 'tts-key', baseUrl: fake.url }), offline]);
    for (let i = 0; i < 5; i++) await say(flapping);
    assert.equal(fake.requests.length, 6, 'three transient failures in a row drop it too');
  });
});

describe('Deepgram failing mid-call (FallbackStt)', () => {
  let cloud: FakeDeepgram;
  let backup: FakeDeepgram;
  const events: ProviderFallback[] = [];
  beforeEach(async () => {
    events.length = 0;
    cloud = await startFakeDeepgram({ apiKey: 'dg-key', transcriptFor: () => 'from the cloud' });
    backup = await startFakeDeepgram({ apiKey: 'backup', transcriptFor: () => 'from the backup' });
  });
  afterEach(async () => {
    await cloud.close();
    await backup.close();
  });
  const chain = () => new FallbackStt([new DeepgramStt({ apiKey: 'dg-key', baseUrl: cloud.url }), new DeepgramStt({ apiKey: 'backup', baseUrl: backup.url })], { onFallback: (e) => events.push(e) });
  async function utterance(stt: FallbackStt): Promise<string> {
    const stream = await stt.open({ language: 'en', keywords: [], signal: new AbortController().signal });
    for (let i = 0; i < 20; i++) stream.push(tone(160));
    return stream.finish();
  }

  it('a stream closed 1011 mid-utterance replays the audio into the next provider; the next utterance tries the cloud again', async () => {
    cloud.failMidStream = { afterBytes: 2000, code: 1011, reason: 'NET-0001' };
    const stt = chain();
    assert.equal(await utterance(stt), 'from the backup');
    assert.equal(backup.audioBytes[0], 20 * 160 * 2, 'the whole utterance reached the backup');
    assert.deepEqual(events.map((e) => [e.from, e.to, e.forRestOfCall, e.reason]), [['deepgram', 'deepgram', false, 'deepgram: closed 1011 NET-0001']]);
    cloud.failMidStream = undefined;
    assert.equal(await utterance(stt), 'from the cloud');
  });

  it('a stream closed 1008 (or a refused key) drops the provider for the call; with none left the event says so', async () => {
    cloud.failMidStream = { afterBytes: 2000, code: 1008, reason: 'DATA-0000' };
    const stt = chain();
    assert.equal(await utterance(stt), 'from the backup');
    cloud.failMidStream = undefined;
    assert.equal(await utterance(stt), 'from the backup');
    assert.equal(cloud.attempts, 1, 'the dropped provider was not asked again');
    assert.equal(events[0]?.forRestOfCall, true);

    backup.refuseWith = 401;
    await assert.rejects(utterance(stt), /401/);
    assert.deepEqual(events.at(-1), { kind: 'stt', from: 'deepgram', to: undefined, reason: 'deepgram: handshake refused with HTTP 401 (Refused)', forRestOfCall: true, noneLeft: true });
  });
});

describe('speech profile -> provider', () => {
  it('uses the profile cloud provider when configured, espeak-ng behind it and otherwise', async () => {
    assert.equal(ttsForProfile({ provider: 'elevenlabs', voiceName: 'v1', language: 'en-IN' }, { elevenlabs: { apiKey: 'k' } }).tts.name, 'elevenlabs>espeak-ng');
    assert.equal(ttsForProfile({ provider: 'azure', voiceName: 'en-IN-NeerjaNeural', language: 'en-IN' }, { azure: { apiKey: 'k' } }).voice, 'en-IN-NeerjaNeural');
    const noKey = ttsForProfile({ provider: 'elevenlabs', voiceName: 'v1', language: 'en-IN' });
    assert.equal(noKey.tts.name, 'espeak-ng');
    assert.equal(noKey.voice, '', 'a cloud voice id is not passed to espeak-ng');
    assert.match(noKey.offlineReason ?? '', /no elevenlabs credentials/);
  });

  it("STT per the number's language: routes first, Deepgram when configured, offline for English, else unsupported", async () => {
    const deepgram = { deepgram: { apiKey: 'k' } };
    assert.equal(sttForLanguage('en-US').stt.name, 'pocketsphinx');
    assert.equal(sttForLanguage('en-IN', { credentials: deepgram }).stt.name, 'deepgram>pocketsphinx');
    assert.equal(sttForLanguage('hi-IN', { credentials: deepgram }).stt.name, 'deepgram', 'no offline model behind it for Hindi');
    const routed = { credentials: deepgram, sttRoutes: [{ languages: ['hi', 'ta-IN'], provider: 'deepgram' as const }, { languages: ['*'], provider: 'offline' as const }] };
    assert.equal(sttForLanguage('hi-IN', routed).stt.name, 'deepgram');
    assert.equal(sttForLanguage('en-US', routed).stt.name, 'pocketsphinx', 'English kept offline by the catch-all route');
    const tamil = sttForLanguage('ta-IN', { credentials: {} });
    assert.match(tamil.unsupported ?? '', /no speech-to-text for ta-IN/);
    await assert.rejects(tamil.stt.open({ language: 'ta-IN', keywords: [], signal: new AbortController().signal }), (e: unknown) => e instanceof SpeechProviderError && !e.retryable);
    assert.equal(sttForLanguage('bn-IN', routed).unsupported?.includes('bn-IN'), true, 'the catch-all offline route cannot serve Bengali');
  });

  it('a speech profile on a failing cloud still speaks through espeak-ng', async () => {
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
