import { AppError } from '../../core/errors.js';
import type { Alternative, ListenExpectation } from '../../core/ports/conversation.js';

/**
 * Streaming speech provider contracts. Audio is always 8 kHz mono 16-bit PCM (the call's rate),
 * so adapters resample at their edge and the pipeline never converts.
 */

export interface SttOptions {
  /** BCP-47 language, e.g. `en-US`, `hi-IN` (phone number setting "Language"). */
  readonly language: string;
  /** Words to favour (phone number "Boosted Keywords"); the offline engine builds its grammar from them. */
  readonly keywords: readonly string[];
  /**
   * What the current block acts on (phrase groups, spoken values): the offline engine's grammar
   * is built from it; cloud engines may boost its phrases.
   */
  readonly expectation?: Omit<ListenExpectation, 'dtmf'>;
  readonly signal: AbortSignal;
}

export interface Transcript {
  readonly text: string;
  readonly final: boolean;
  /** 0..1 when the provider reports it. */
  readonly confidence?: number;
  /** Other readings of the same audio (n-best), when the provider reports them. */
  readonly alternatives?: readonly Alternative[];
  /** Grammar-constrained recognisers: the expected phrase group most of the speech matched ('' = none). */
  readonly meaning?: string;
}

/** One utterance (or a continuous stream) of caller audio in, transcripts out. */
export interface SttStream {
  /**
   * Pushes 8 kHz PCM; cheap and non-blocking (adapters buffer or send at once). `wideband`: the
   * same 20 ms at 16 kHz when the call's codec carries it (G.722); a provider that can hear the
   * upper band uses it, the others ignore it.
   */
  push(samples: Int16Array, wideband?: Int16Array): void;
  /** No more audio: resolves with the final transcript of what was pushed ('' when nothing was recognised). */
  finish(): Promise<string>;
  /** Partial (and final) transcripts as the provider sends them. */
  onTranscript(listener: (t: Transcript) => void): void;
  /** Drops the stream without waiting for a result (barge-in, hangup). */
  abort(): void;
}

export interface SttProvider {
  readonly name: string;
  open(options: SttOptions): Promise<SttStream>;
}

export interface TtsRequest {
  readonly text: string;
  /** Provider voice identifier (speech profile "Voice Name"). */
  readonly voice: string;
  readonly language: string;
  readonly signal: AbortSignal;
}

export interface TtsProvider {
  readonly name: string;
  /** 8 kHz PCM chunks as they are synthesised; stops (without error) when the signal aborts. */
  synthesize(request: TtsRequest): AsyncIterable<Int16Array>;
}

/** A provider failure; `retryable` says whether the next provider (or a retry) may help. */
export class SpeechProviderError extends AppError {
  constructor(provider: string, message: string, retryable: boolean, cause?: unknown) {
    super(retryable ? 'unavailable' : 'failed_precondition', `${provider}: ${message}`, { retryable, cause, meta: { provider } });
    this.name = 'SpeechProviderError';
  }
}

/** HTTP statuses after which another attempt (or provider) may succeed. */
export function retryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 425 || status === 429 || status >= 500;
}
