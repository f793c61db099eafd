/**
 * The small surface a recipe run talks to the caller through (a port: the recipe runtime in
 * control-api uses it, the voice pipeline in media/voice implements it over a phone call, and
 * TextConversation implements it over text, so every recipe can be run and tested without audio).
 */
export interface SayOptions {
  /** When false the caller cannot interrupt; audio heard meanwhile is transcribed but not acted on. */
  readonly bargeIn: boolean;
  readonly signal: AbortSignal;
  /**
   * The block's speech normalisation rules (numbers, dates, ...); each adds latency, so only
   * these run. Absent: the voice pipeline applies its default set.
   */
  readonly speechNormalization?: readonly ('numbers' | 'dates' | 'times' | 'currency' | 'units' | 'phoneNumbers' | 'ordinals')[];
}

export interface SayResult {
  /** The caller interrupted; `unspoken` is the text that was not played (spec: Smart Interruption). */
  readonly interrupted: boolean;
  readonly unspoken?: string;
}

export interface ListenOptions {
  readonly signal: AbortSignal;
  /** How long to wait for the caller before reporting silence. */
  readonly timeoutMs: number;
}

export type Heard =
  | { readonly kind: 'utterance'; readonly text: string }
  | { readonly kind: 'dtmf'; readonly digits: string }
  | { readonly kind: 'silence' };

export type TransferResult = { readonly ok: true } | { readonly ok: false; readonly reason: string };

export interface Conversation {
  say(text: string, options: SayOptions): Promise<SayResult>;
  /**
   * Optional: start speaking while the text is still being generated (model deltas straight into
   * TTS, saving the wait for the whole reply). Resolves once all of it was spoken, with the text.
   */
  sayStream?(pieces: AsyncIterable<string>, options: SayOptions): Promise<SayResult & { readonly text: string }>;
  listen(options: ListenOptions): Promise<Heard>;
  /** Bridges the caller to a SIP URI or E.164 number after speaking the bridge message. */
  transfer(target: string, bridgeMessage: string, signal: AbortSignal): Promise<TransferResult>;
  /** The agent ends the call. Idempotent. */
  hangup(): Promise<void>;
}

/** Thrown by conversation operations when the call is gone (caller hung up or run cancelled). */
export class CallEndedError extends Error {
  constructor(message = 'the call has ended') {
    super(message);
    this.name = 'CallEndedError';
  }
}

export function throwIfEnded(signal: AbortSignal): void {
  if (signal.aborted) throw new CallEndedError();
}
