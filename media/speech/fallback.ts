import { SpeechProviderError, type SttOptions, type SttProvider, type SttStream, type Transcript, type TtsProvider, type TtsRequest } from './speech-provider.js';

const retryable = (error: unknown): boolean => error instanceof SpeechProviderError && error.retryable;

/**
 * TTS with fallback: the next provider is tried when one fails with a retryable error *before*
 * any audio was produced. Once audio has been played, a failure is final: switching voices
 * mid-sentence (or repeating the start) is worse than stopping.
 */
export class FallbackTts implements TtsProvider {
  readonly name: string;

  constructor(private readonly providers: readonly TtsProvider[]) {
    if (providers.length === 0) throw new Error('FallbackTts needs at least one provider');
    this.name = providers.map((p) => p.name).join('>');
  }

  async *synthesize(request: TtsRequest): AsyncIterable<Int16Array> {
    let lastError: unknown;
    for (const provider of this.providers) {
      let produced = false;
      try {
        for await (const chunk of provider.synthesize(request)) {
          produced = true;
          yield chunk;
        }
        return;
      } catch (error) {
        if (request.signal.aborted) return;
        if (produced || !retryable(error)) throw error;
        lastError = error;
      }
    }
    throw lastError;
  }
}

/** Keeps at most this much audio per utterance for replay to the next provider (30 s). */
const MAX_REPLAY_SAMPLES = 30 * 8000;

/**
 * STT with fallback: opening the next provider when `open` fails retryably, and replaying the
 * utterance's audio into the next provider when `finish` fails retryably (the caller's words are
 * not lost because one cloud hiccupped).
 */
export class FallbackStt implements SttProvider {
  readonly name: string;

  constructor(private readonly providers: readonly SttProvider[]) {
    if (providers.length === 0) throw new Error('FallbackStt needs at least one provider');
    this.name = providers.map((p) => p.name).join('>');
  }

  async open(options: SttOptions): Promise<SttStream> {
    const first = await this.openFrom(0, options);
    return new FallbackStream(first.stream, first.index, (from) => this.openFrom(from, options));
  }

  private async openFrom(from: number, options: SttOptions): Promise<{ stream: SttStream; index: number }> {
    let lastError: unknown = new SpeechProviderError(this.name, 'no provider left', false);
    for (let i = from; i < this.providers.length; i++) {
      try {
        return { stream: await this.providers[i]!.open(options), index: i };
      } catch (error) {
        if (!retryable(error)) throw error;
        lastError = error;
      }
    }
    throw lastError;
  }
}

class FallbackStream implements SttStream {
  private readonly kept: Int16Array[] = [];
  private keptSamples = 0;
  private readonly listeners: ((t: Transcript) => void)[] = [];

  constructor(
    private current: SttStream,
    private index: number,
    private readonly reopen: (from: number) => Promise<{ stream: SttStream; index: number }>,
  ) {
    current.onTranscript((t) => this.forward(t));
  }

  push(samples: Int16Array): void {
    if (this.keptSamples < MAX_REPLAY_SAMPLES) {
      this.kept.push(samples.slice());
      this.keptSamples += samples.length;
    }
    this.current.push(samples);
  }

  onTranscript(listener: (t: Transcript) => void): void {
    this.listeners.push(listener);
  }

  abort(): void {
    this.current.abort();
  }

  async finish(): Promise<string> {
    for (;;) {
      try {
        return await this.current.finish();
      } catch (error) {
        if (!retryable(error)) throw error;
        const next = await this.reopen(this.index + 1);
        this.current = next.stream;
        this.index = next.index;
        next.stream.onTranscript((t) => this.forward(t));
        for (const chunk of this.kept) next.stream.push(chunk);
      }
    }
  }

  private forward(t: Transcript): void {
    for (const l of this.listeners) l(t);
  }
}
