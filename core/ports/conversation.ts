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
  /**
   * Strings in the text to read character by character whatever the rules would make of them:
   * ids and order numbers ("123456" is "one two three four five six", never "one lakh ...").
   */
  readonly spellOut?: readonly string[];
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

/** How key presses become one answer (per block): the entry ends at the terminator, at maxDigits or after the inter-digit timeout. */
export interface DtmfCollection {
  readonly maxDigits: number;
  /** '#' or '*' ends the entry (and is not part of it); '' = no terminator. */
  readonly terminator: '#' | '*' | '';
  readonly interDigitTimeoutMs: number;
}

/** Keypad entry as one answer unless a block says otherwise: up to 32 digits, `#` ends it, 3 s between keys. */
export const defaultDtmfCollection: DtmfCollection = { maxDigits: 32, terminator: '#', interDigitTimeoutMs: 3_000 };

/** One thing a caller may mean, as the phrases that say it (an intent's examples, yes, no, an enum option). */
export interface PhraseGroup {
  readonly name: string;
  readonly phrases: readonly string[];
  /** Yes / no: answers that go with any other group ("no, please cancel it") instead of competing with it. */
  readonly neutral?: boolean;
}

/** Spoken values a block can capture: dates ("the third of December"), amounts, digit strings. */
export type SpokenValue = 'date' | 'number' | 'digits';

/**
 * What the block about to listen can accept. Recognisers use it to hear better: the offline
 * engine only recognises these phrases and values (its grammar), cloud engines boost them.
 */
export interface ListenExpectation {
  readonly phrases: readonly PhraseGroup[];
  readonly values: readonly SpokenValue[];
  /** Single words a question may be made of (the knowledge library's vocabulary): heard, never a meaning. */
  readonly words?: readonly string[];
  /**
   * The words of the question the block asks: callers echo them around their answer ("yes, I
   * will be at home tomorrow"), so beside an answer they are part of it, never an answer themselves.
   */
  readonly frameWords?: readonly string[];
  /** A spoken digit string has exactly this many digits (a `digits` variable's `length`). */
  readonly digitCount?: number;
  readonly dtmf?: DtmfCollection;
}

/** Another reading of the same audio, for deciding whether the best one is trustworthy. */
export interface Alternative {
  readonly text: string;
  readonly confidence: number;
  /**
   * How much less likely than the best reading, in the decoder's log units per 10 ms of audio
   * (0 = as likely, negative = likelier), when the recogniser can tell; cloud recognisers give
   * only `confidence`.
   */
  readonly scoreGap?: number;
}

export type Heard =
  | {
      readonly kind: 'utterance';
      readonly text: string;
      /** 0..1 from the recogniser, when it reports one: how sure it is of `text`. */
      readonly confidence?: number;
      /** Competing readings (n-best), best first, when the recogniser reports them. */
      readonly alternatives?: readonly Alternative[];
      /**
       * A grammar-constrained recogniser's account of what was meant: the name of the expected
       * phrase group most of the speech matched ('' = none, only values or nothing). Open
       * recognisers leave it out.
       */
      readonly meaning?: string;
    }
  | { readonly kind: 'dtmf'; readonly digits: string }
  | { readonly kind: 'silence' };

/** Why caller words did not reach the flow (they are still transcribed). */
export type IgnoredWhy = 'bargeInDisabled' | 'backchannel' | 'notListening';

export type TransferResult = { readonly ok: true } | { readonly ok: false; readonly reason: string };

export interface Conversation {
  say(text: string, options: SayOptions): Promise<SayResult>;
  /**
   * Optional: start speaking while the text is still being generated (model deltas straight into
   * TTS, saving the wait for the whole reply). Resolves once all of it was spoken, with the text.
   */
  sayStream?(pieces: AsyncIterable<string>, options: SayOptions): Promise<SayResult & { readonly text: string }>;
  listen(options: ListenOptions): Promise<Heard>;
  /**
   * Optional: the block that now takes the turn says what it can accept. Caller words heard
   * before this call (during a block that did not listen) are not answers to it: they are
   * reported through `onIgnored` with 'notListening' and dropped from the queue.
   */
  expect?(expectation: ListenExpectation): void;
  /**
   * Optional: where caller words that do not drive the flow go (the run records them in the
   * transcript). `turn` numbers the caller turn they were said in (see `nextTurn`).
   */
  onIgnored?(listener: (text: string, why: IgnoredWhy, turn?: number) => void): void;
  /**
   * Optional: the number the caller's next turn will get. The run notes it as each block starts,
   * so words recognised later are put under the block that was running when they were said.
   */
  readonly nextTurn?: number;
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
