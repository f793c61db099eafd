import type { z } from 'zod';
import type { ChatMessage } from '../../../platform/llm/chat-provider.js';
import type { GlobalSettings } from '../../../model/recipes/recipe-schema.js';
import type { CallContext } from './call-context.js';
import type { Heard, ListenExpectation, SayOptions, SayResult, TransferResult } from '../../../../core/ports/conversation.js';
import type { TurnNote } from './run-events.js';
import type { RuntimeServices } from './services.js';

/**
 * The contract every block module implements. A block talks to the caller only through its
 * context and returns an outcome; it never moves the cursor itself, so the runner has no
 * per-block special cases.
 */
export type BlockOutcome =
  | { readonly exit: string }
  /**
   * `saidOver`: the caller spoke over the closing line (not a goodbye of their own). The run then
   * goes back to the last block that listened, with those words as its answer, instead of ending.
   * `unspoken`: the rest of the line the words cut short (said alone if that block decides the same).
   */
  | { readonly end: 'closed'; readonly disposition: string; readonly saidOver?: Heard; readonly unspoken?: string }
  | { readonly end: 'transferred'; readonly target: string };

/** How a block speaks: barge-in, and the block's speech normalisation rules (absent: the default set). */
export interface BlockSayOptions {
  readonly bargeIn?: boolean;
  readonly speechNormalization?: SayOptions['speechNormalization'];
  /** Strings in the text read character by character (a value being read back, e.g. an order number). */
  readonly spellOut?: readonly string[];
}

export interface BlockContext {
  readonly blockId: string;
  readonly call: CallContext;
  readonly global: GlobalSettings;
  readonly services: RuntimeServices;
  /** Aborted when the caller hangs up or the run is cancelled. */
  readonly signal: AbortSignal;
  /**
   * Words the caller said before this block asked anything (over the closing line the run came
   * back from): a listening block takes them as its first answer instead of speaking its opening.
   */
  readonly carried?: Heard;
  /**
   * The run can go back to a listening block if the caller speaks over this block's closing line
   * (a block that listened ran before, and the call has not gone back yet). Absent: it can.
   */
  readonly canReopen?: boolean;
  say(text: string, options?: BlockSayOptions): Promise<SayResult>;
  /** Present when the conversation can speak text as it streams in (see Conversation.sayStream). */
  readonly sayStream?: (pieces: AsyncIterable<string>, options?: BlockSayOptions) => Promise<SayResult & { readonly text: string }>;
  listen(options?: { readonly timeoutMs?: number }): Promise<Heard>;
  /** Tells the recogniser what this block can accept (before its question is spoken). */
  expect(expectation: ListenExpectation): void;
  /** Records how the block handled a turn (reprompt, confirmation, ...) in the run's steps. */
  note(turn: Omit<TurnNote, 'blockId'>): void;
  transfer(target: string, bridgeMessage: string): Promise<TransferResult>;
  /** Renders `{{name}}`; `encode` escapes each substituted value (URL components, JSON strings). */
  render(template: string, encode?: (value: string) => string): string;
  renderDeep(value: unknown): unknown;
  getVariable(name: string): unknown;
  /** A recipe variable, else a built-in (caller_number, current_date, ...); undefined if neither. */
  lookup(name: string): unknown;
  setVariable(name: string, value: unknown): void;
  /** Snapshot of the recipe variables (campaign variables included). */
  variables(): Record<string, unknown>;
  /** The conversation so far as chat messages, for blocks with conversation history on. */
  history(): ChatMessage[];
  /** Caller's "today" in the tenant's timezone, YYYY-MM-DD. */
  today(): string;
  warn(message: string): void;
}

export interface BlockModule<Settings> {
  readonly type: string;
  readonly settings: z.ZodType<Settings>;
  run(ctx: BlockContext, settings: Settings, signal: AbortSignal): Promise<BlockOutcome>;
}
