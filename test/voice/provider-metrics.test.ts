import assert from 'node:assert/strict';
import { metricsRegistry } from '../../core/metrics.js';
import { OpenAiCompatibleProvider } from '../../control-api/platform/llm/openai-compatible.js';
import { sttForLanguage, ttsForProfile } from '../../media/speech/provider-registry.js';
import { FakeChatCompletionsServer } from '../fakes/fake-chat-completions.js';
import { startFakeDeepgram } from '../fakes/fake-deepgram.js';
import { startFakeTtsServer } from '../fakes/fake-tts-servers.js';

/** A histogram's sample count for one provider, as Prometheus would scrape it. */
async function histogramCount(name: string, provider: string): Promise<number> {
  const metric = await metricsRegistry.getSingleMetric(name)?.get();
  return metric?.values.find((v) => (v as { metricName?: string }).metricName === `${name}_count` && v.labels['provider'] === provider)?.value ?? 0;
}

/** A counter's value for one provider. */
async function counterValue(name: string, provider: string): Promise<number> {
  const metric = await metricsRegistry.getSingleMetric(name)?.get();
  return metric?.values.find((v) => v.labels['provider'] === provider)?.value ?? 0;
}

async function drain(chunks: AsyncIterable<Int16Array>): Promise<number> {
  let samples = 0;
  for await (const c of chunks) samples += c.length;
  return samples;
}

/**
 * Issue 14: STT, TTS and LLM latency and errors by provider, against fakes that speak each
 * cloud's real wire protocol on loopback (and espeak-ng itself for the offline voice).
 */
describe('speech and language-model metrics by provider', function () {
  this.timeout(60_000);

  it('times a language-model answer and its first streamed text, and counts a refused request as an error', async () => {
    const fake = await new FakeChatCompletionsServer(() => ({ content: 'Your order ships tomorrow.' })).start();
    try {
      const provider = new OpenAiCompatibleProvider({ baseUrl: fake.baseUrl, model: 'fake-model', apiKey: 'sk-fake-key-0123456789', maxRetries: 0 });
      const [latency, first, errors] = await Promise.all([histogramCount('vap_llm_latency_seconds', 'openai-compatible'), histogramCount('vap_llm_first_token_seconds', 'openai-compatible'), counterValue('vap_llm_errors_total', 'openai-compatible')]);
      const result = await provider.chat({ messages: [{ role: 'user', content: 'When does it ship?' }] });
      assert.equal(result.content, 'Your order ships tomorrow.');
      assert.equal(await histogramCount('vap_llm_latency_seconds', 'openai-compatible'), latency + 1);
      assert.equal(await histogramCount('vap_llm_first_token_seconds', 'openai-compatible'), first + 1);
      fake.enqueue({ status: 400 });
      await assert.rejects(provider.chat({ messages: [{ role: 'user', content: 'again' }] }));
      assert.equal(await counterValue('vap_llm_errors_total', 'openai-compatible'), errors + 1);
      assert.equal(await histogramCount('vap_llm_latency_seconds', 'openai-compatible'), latency + 1, 'a failed request is no latency sample');
    } finally {
      await fake.stop();
    }
  });

  it('times speech-to-text per provider and counts a refused stream against Deepgram, not its fallback', async () => {
    const key = 'dg-metrics-key-0123456789';
    const deepgram = await startFakeDeepgram({ apiKey: key, transcriptFor: (bytes) => (bytes > 0 ? 'yes please' : '') });
    try {
      const before = { latency: await histogramCount('vap_stt_latency_seconds', 'deepgram'), errors: await counterValue('vap_stt_errors_total', 'deepgram') };
      const { stt } = sttForLanguage('hi-IN', { credentials: { deepgram: { apiKey: key, baseUrl: deepgram.url } } });
      const stream = await stt.open({ language: 'hi-IN', keywords: [], signal: new AbortController().signal });
      stream.push(new Int16Array(8000).fill(1200));
      assert.equal(await stream.finish(), 'yes please');
      assert.equal(await histogramCount('vap_stt_latency_seconds', 'deepgram'), before.latency + 1);

      deepgram.refuseWith = 503;
      await assert.rejects(stt.open({ language: 'hi-IN', keywords: [], signal: new AbortController().signal }));
      assert.equal(await counterValue('vap_stt_errors_total', 'deepgram'), before.errors + 1);
    } finally {
      await deepgram.close();
    }
  });

  it('times the first audio of each TTS provider; a failing cloud is its own error and espeak-ng speaks instead', async () => {
    const key = 'xi-metrics-key-0123456789';
    const tts = await startFakeTtsServer(key);
    try {
      const before = {
        eleven: await histogramCount('vap_tts_first_audio_seconds', 'elevenlabs'),
        espeak: await histogramCount('vap_tts_first_audio_seconds', 'espeak-ng'),
        errors: await counterValue('vap_tts_errors_total', 'elevenlabs'),
      };
      const { tts: voice, voice: voiceName } = ttsForProfile({ provider: 'elevenlabs', voiceName: 'v1', language: 'en-IN' }, { elevenlabs: { apiKey: key, baseUrl: tts.url } });
      const request = { text: 'Your order ships tomorrow.', voice: voiceName, language: 'en-IN', signal: new AbortController().signal };
      assert.ok((await drain(voice.synthesize(request))) > 0);
      assert.equal(await histogramCount('vap_tts_first_audio_seconds', 'elevenlabs'), before.eleven + 1);

      tts.failWith = 503;
      assert.ok((await drain(voice.synthesize(request))) > 0, 'espeak-ng spoke the sentence');
      assert.equal(await counterValue('vap_tts_errors_total', 'elevenlabs'), before.errors + 1);
      assert.equal(await histogramCount('vap_tts_first_audio_seconds', 'espeak-ng'), before.espeak + 1);
    } finally {
      await tts.close();
    }
  });
});
