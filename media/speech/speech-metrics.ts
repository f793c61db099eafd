import { counter, histogram } from '../../core/metrics.js';
import type { SttProvider, SttStream, TtsProvider, TtsRequest } from './speech-provider.js';

/**
 * Speech provider latency and errors, labelled by provider (a fixed set: deepgram, pocketsphinx,
 * elevenlabs, azure, espeak-ng). Wrapped around each provider, inside the fallback chains, so a
 * failing cloud shows as that cloud's errors and its fallback's latency as the fallback's own.
 * Aborted requests (barge-in, hang-up) count as neither.
 */
const sttLatency = histogram(
  'stt_latency_seconds',
  'Speech-to-text: from the end of the caller\'s utterance (finish) to the final transcript, by provider',
  ['provider'],
  [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10],
);
const sttErrors = counter('stt_errors_total', 'Speech-to-text streams that failed to open or to finish, by provider', ['provider']);
const ttsFirstAudio = histogram(
  'tts_first_audio_seconds',
  'Text-to-speech: from the request to the first audio, by provider',
  ['provider'],
  [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10],
);
const ttsErrors = counter('tts_errors_total', 'Text-to-speech requests that failed, by provider', ['provider']);

const seconds = (since: number): number => (performance.now() - since) / 1000;

export function timedStt(provider: SttProvider): SttProvider {
  const latency = sttLatency.labels(provider.name);
  const errors = sttErrors.labels(provider.name);
  return {
    name: provider.name,
    async open(options) {
      let stream: SttStream;
      try {
        stream = await provider.open(options);
      } catch (error) {
        if (!options.signal.aborted) errors.inc();
        throw error;
      }
      return {
        push: (samples) => stream.push(samples),
        onTranscript: (listener) => stream.onTranscript(listener),
        abort: () => stream.abort(),
        async finish() {
          const start = performance.now();
          try {
            const text = await stream.finish();
            latency.observe(seconds(start));
            return text;
          } catch (error) {
            if (!options.signal.aborted) errors.inc();
            throw error;
          }
        },
      };
    },
  };
}

export function timedTts(provider: TtsProvider): TtsProvider {
  const firstAudio = ttsFirstAudio.labels(provider.name);
  const errors = ttsErrors.labels(provider.name);
  return {
    name: provider.name,
    async *synthesize(request: TtsRequest) {
      const start = performance.now();
      let first = true;
      try {
        for await (const chunk of provider.synthesize(request)) {
          if (first) {
            first = false;
            firstAudio.observe(seconds(start));
          }
          yield chunk;
        }
      } catch (error) {
        if (!request.signal.aborted) errors.inc();
        throw error;
      }
    },
  };
}
