import type { ChatMessage } from './chat-provider.js';

/**
 * What a conversational block asks of a "brain" for one turn, independent of whether an LLM or
 * the deterministic offline engine answers. Blocks build this from their settings.
 */
export type VariableValue = string | number | boolean;

export interface IntentSpec {
  readonly name: string;
  readonly description: string;
  /** Sample phrasings; the offline engine matches on them, an LLM reads them as hints. */
  readonly examples?: readonly string[];
  /** The variables this intent stores; a turn stating all of them means this intent (offline engine). */
  readonly captures?: readonly string[];
}

/** `digits`: a string of digits (an id, an order or phone number), kept with its leading zeros. */
export type VariableKind = 'text' | 'number' | 'boolean' | 'date' | 'enum' | 'digits';

export interface VariableSpec {
  readonly name: string;
  readonly description: string;
  readonly kind: VariableKind;
  readonly options?: readonly string[];
  /** `digits` only: the string has exactly this many digits (an order number of 6); another length is no value. */
  readonly length?: number;
}

export interface TurnRequest {
  /** System instructions: rendered prompt, additional instructions, persona, confines, knowledge. */
  readonly instructions: string;
  /** Earlier turns; empty when the block's conversation history toggle is off. */
  readonly history: readonly ChatMessage[];
  /** The caller's latest utterance; undefined for the block's opening turn. */
  readonly userText?: string;
  readonly intents: readonly IntentSpec[];
  readonly variables: readonly VariableSpec[];
  /** 0 concise .. 1 chatty (spec default 0.5). */
  readonly expressiveness: number;
  /** Reply templates (already rendered) the offline engine speaks; an LLM ignores them. */
  readonly replies?: TemplatedReplies;
  /** Retrieved knowledge passages (AnswerFlow) to ground the answer in. */
  readonly knowledge?: readonly string[];
  /** Caller's "today" (YYYY-MM-DD in the tenant's timezone) so relative dates resolve. */
  readonly today?: string;
  readonly signal?: AbortSignal;
  readonly onDelta?: (text: string) => void;
}

export interface TemplatedReplies {
  readonly opening?: string;
  readonly reprompt?: string;
  readonly intents?: Readonly<Record<string, string>>;
}

export interface TurnResult {
  readonly reply: string;
  /** Name of a declared intent, when the caller's turn matched one. */
  readonly intent?: string;
  readonly values: Readonly<Record<string, VariableValue>>;
}

export interface AgentEngine {
  readonly name: string;
  turn(request: TurnRequest): Promise<TurnResult>;
}
