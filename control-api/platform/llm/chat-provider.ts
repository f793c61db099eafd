/**
 * The one interface every language-model backend implements. Shaped after the chat-completions
 * wire format because nearly every hosted and self-hosted server speaks it.
 */
export type ChatRole = 'system' | 'user' | 'assistant' | 'tool';

export interface ToolCall {
  readonly id: string;
  readonly name: string;
  /** Raw JSON text as the model produced it; callers parse and validate it. */
  readonly arguments: string;
}

export interface ChatMessage {
  readonly role: ChatRole;
  readonly content: string;
  readonly toolCalls?: readonly ToolCall[];
  readonly toolCallId?: string;
}

export interface ToolDefinition {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the arguments object. */
  readonly parameters: Readonly<Record<string, unknown>>;
}

export type ToolChoice = 'auto' | 'none' | 'required' | { readonly name: string };

export interface ChatRequest {
  readonly messages: readonly ChatMessage[];
  readonly tools?: readonly ToolDefinition[];
  readonly toolChoice?: ToolChoice;
  readonly temperature?: number;
  readonly maxTokens?: number;
  /** Aborts the HTTP exchange and any retry wait (a hangup cancels the turn). */
  readonly signal?: AbortSignal;
  /** Called with each piece of assistant text as it streams in, so speech can start early. */
  readonly onDelta?: (text: string) => void;
}

export interface ChatResult {
  readonly content: string;
  readonly toolCalls: readonly ToolCall[];
  readonly finishReason: string;
}

export interface ChatProvider {
  readonly name: string;
  chat(request: ChatRequest): Promise<ChatResult>;
}

/** A provider failure; `retryable` says whether the same request may succeed later. */
export class ProviderError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ProviderError';
  }
}

export function isProviderError(error: unknown): error is ProviderError {
  return error instanceof ProviderError;
}
