import { SpeechProviderError, type SttOptions, type SttProvider, type SttStream, type Transcript, type TtsProvider, type TtsRequest } from './speech-provider.js';

/**
 * One provider left for the next one (or for none). `reason` is the provider error's message
 * (status, close code, what broke): adapters never put keys in messages, so it may be logged.
 */
export interface ProviderFallback {
  readonly kind: 'stt' | 'tts';
  readonly from: string;
  /** The provider that takes over; undefined when none is left for this request. */
  readonly to: string | undefined;
  readonly reason: string;
  /** True when `from` will not be tried again for the rest of the call. */
  readonly forRestOfCall: boolean;
  /** True when every provider of the chain is dropped: nothing can serve this call any more. */
  readonly noneLeft: boolean;
  /** TTS only: the failure came after audio was played (the sentence is spoken again from its start). */
  readonly midStream?: boolean;
}

export interface FallbackOptions {
  readonly onFallback?: (event: ProviderFallback) => void;
  /** Transient failures in a row after which a provider is dropped for the call. Default 3. */
  readonly maxTransientFailures?: number;
}

const reasonOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/**
 * The per-call rule both fallbacks share (an instance lives as long as one call): a provider that
 * fails non-transiently (refused key, unknown voice, bad request: `retryable` false) or
 * transiently `maxTransientFailures` times in a row is skipped for the rest of the call, so the
 * caller does not wait on a dead provider at every turn; a single transient failure (timeout,
 * 5xx, 429, dropped connection) only moves that one request on, and the next request tries the
 * provider again.
 */
class ProviderHealth {
  private readonly dropped = new Set<number>();
  private readonly streak: number[] = [];

  constructor(private readonly maxTransient: number) {}

  usable(index: number): boolean {
    return !this.dropped.has(index);
  }

  succeeded(index: number): void {
    this.streak[index] = 0;
  }

  /** Records a failure; true when the provider is now dropped for the call. */
  failed(index: number, error: unknown): boolean {
    const transient = error instanceof SpeechProviderError && error.retryable;
    this.streak[index] = (this.streak[index] ?? 0) + 1;
    if (!transient || this.streak[index]! >= this.maxTransient) this.dropped.add(index);
    return this.dropped.has(index);
  }

  noneLeft(count: number): boolean {
    return this.dropped.size >= count;
  }

  next(after: number, count: number): number | undefined {
    for (let i = after + 1; i < count; i++) if (this.usable(i)) return i;
    return undefined;
  }
}

/**
 * TTS with fallback, in order. A failure before any audio moves the sentence to the next
 * provider. A failure after audio was played (a stream cut mid-sentence) has the next provider
 * speak the whole sentence again: the caller hears the start twice, in another voice, rather
 * than losing its end (the words may be the order number they called for).
 */
export class FallbackTts implements TtsProvider {
  readonly name: string;
  private readonly health: ProviderHealth;

  constructor(
    private readonly providers: readonly TtsProvider[],
    private readonly options: FallbackOptions = {},
  ) {
    if (providers.length === 0) throw new Error('FallbackTts needs at least one provider');
    this.name = providers.map((p) => p.name).join('>');
    this.health = new ProviderHealth(options.maxTransientFailures ?? 3);
  }

  async *synthesize(request: TtsRequest): AsyncIterable<Int16Array> {
    let lastError: unknown = new SpeechProviderError(this.name, 'no text-to-speech provider left for this call', false);
    for (let i = 0; i < this.providers.length; i++) {
      if (!this.health.usable(i)) continue;
      const provider = this.providers[i]!;
      let produced = false;
      try {
        for await (const chunk of provider.synthesize(request)) {
          produced = true;
          yield chunk;
        }
        this.health.succeeded(i);
        return;
      } catch (error) {
        if (request.signal.aborted) return;
        lastError = error;
        const forRestOfCall = this.health.failed(i, error);
        const next = this.health.next(i, this.providers.length);
        const to = next === undefined ? undefined : this.providers[next]!.name;
        const noneLeft = this.health.noneLeft(this.providers.length);
        this.options.onFallback?.({ kind: 'tts', from: provider.name, to, reason: reasonOf(error), forRestOfCall, noneLeft, midStream: produced });
      }
    }
    throw lastError;
  }
}

/** Keeps at most this much audio per utterance for replay to the next provider (30 s). */
const MAX_REPLAY_SAMPLES = 30 * 8000;

/**
 * STT with fallback, in order: the next provider is opened when `open` fails, and when `finish`
 * fails (a stream that broke mid-utterance) the utterance's audio is replayed into the next
 * provider, so the caller's words are not lost because one cloud failed. When no provider is
 * left, `open`/`finish` reject and `onFallback` reports `to: undefined`.
 */
export class FallbackStt implements SttProvider {
  readonly name: string;
  private readonly health: ProviderHealth;

  constructor(
    private readonly providers: readonly SttProvider[],
    private readonly options: FallbackOptions = {},
  ) {
    if (providers.length === 0) throw new Error('FallbackStt needs at least one provider');
    this.name = providers.map((p) => p.name).join('>');
    this.health = new ProviderHealth(options.maxTransientFailures ?? 3);
  }

  async open(options: SttOptions): Promise<SttStream> {
    const first = await this.openFrom(0, options);
    return new FallbackStream(first.stream, first.index, {
      reopen: (from) => this.openFrom(from, options),
      failed: (index, error) => this.report(index, error),
      succeeded: (index) => this.health.succeeded(index),
    });
  }

  private async openFrom(from: number, options: SttOptions): Promise<{ stream: SttStream; index: number }> {
    let lastError: unknown = new SpeechProviderError(this.name, 'no speech-to-text provider left for this call', false);
    for (let i = from; i < this.providers.length; i++) {
      if (!this.health.usable(i)) continue;
      try {
        return { stream: await this.providers[i]!.open(options), index: i };
      } catch (error) {
        if (options.signal.aborted) throw error;
        lastError = error;
        this.report(i, error);
      }
    }
    throw lastError;
  }

  private report(index: number, error: unknown): void {
    const forRestOfCall = this.health.failed(index, error);
    const next = this.health.next(index, this.providers.length);
    const to = next === undefined ? undefined : this.providers[next]!.name;
    const noneLeft = this.health.noneLeft(this.providers.length);
    this.options.onFallback?.({ kind: 'stt', from: this.providers[index]!.name, to, reason: reasonOf(error), forRestOfCall, noneLeft });
  }
}

interface StreamHooks {
  readonly reopen: (from: number) => Promise<{ stream: SttStream; index: number }>;
  readonly failed: (index: number, error: unknown) => void;
  readonly succeeded: (index: number) => void;
}

class FallbackStream implements SttStream {
  private readonly kept: { readonly samples: Int16Array; readonly wideband?: Int16Array }[] = [];
  private keptSamples = 0;
  private readonly listeners: ((t: Transcript) => void)[] = [];
  private aborted = false;

  constructor(
    private current: SttStream,
    private index: number,
    private readonly hooks: StreamHooks,
  ) {
    current.onTranscript((t) => this.forward(t));
  }

  push(samples: Int16Array, wideband?: Int16Array): void {
    if (this.keptSamples < MAX_REPLAY_SAMPLES) {
      this.kept.push({ samples: samples.slice(), ...(wideband ? { wideband: wideband.slice() } : {}) });
      this.keptSamples += samples.length;
    }
    this.current.push(samples, wideband);
  }

  onTranscript(listener: (t: Transcript) => void): void {
    this.listeners.push(listener);
  }

  abort(): void {
    this.aborted = true;
    this.current.abort();
  }

  async finish(): Promise<string> {
    for (;;) {
      try {
        const text = await this.current.finish();
        this.hooks.succeeded(this.index);
        return text;
      } catch (error) {
        if (this.aborted) return '';
        this.hooks.failed(this.index, error);
        const next = await this.hooks.reopen(this.index + 1);
        this.current = next.stream;
        this.index = next.index;
        next.stream.onTranscript((t) => this.forward(t));
        for (const chunk of this.kept) next.stream.push(chunk.samples, chunk.wideband);
      }
    }
  }

  private forward(t: Transcript): void {
    for (const l of this.listeners) l(t);
  }
}
