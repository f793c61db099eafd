import {
  ProviderError,
  type ChatMessage,
  type ChatProvider,
  type ChatRequest,
  type ChatResult,
  type ToolCall,
  type ToolChoice,
} from './chat-provider.js';
import { SseParser } from './sse.js';
import { timeLlmRequest } from './llm-metrics.js';

/**
 * Adapter for any server speaking the OpenAI chat-completions protocol (hosted APIs, vLLM,
 * llama.cpp server, Ollama's /v1, LM Studio). Plain fetch plus our SSE parser instead of the
 * `openai` SDK: we need exact control over abort, per-attempt timeouts and "never retry once
 * text has streamed to the caller", and the wire format is small.
 */
export interface OpenAiCompatibleOptions {
  /** e.g. `https://api.openai.com/v1` or `http://127.0.0.1:8080/v1`; `/chat/completions` is appended. */
  readonly baseUrl: string;
  readonly model: string;
  readonly apiKey?: string;
  /** Per attempt, covering connect to last byte. Default 30 s. */
  readonly timeoutMs?: number;
  /** Extra attempts after a retryable failure. Default 2. */
  readonly maxRetries?: number;
  /** First backoff step; doubles per retry with jitter. Default 300 ms. */
  readonly retryBaseMs?: number;
  /** Use SSE streaming (default true). */
  readonly stream?: boolean;
  readonly extraHeaders?: Readonly<Record<string, string>>;
}

const retryableStatuses = new Set([408, 409, 425, 429, 500, 502, 503, 504]);
const maxRetryAfterMs = 10_000;

export class OpenAiCompatibleProvider implements ChatProvider {
  readonly name: string;

  constructor(private readonly options: OpenAiCompatibleOptions) {
    this.name = `openai-compatible:${options.model}`;
  }

  async chat(request: ChatRequest): Promise<ChatResult> {
    const timing = timeLlmRequest('openai-compatible');
    const onDelta = request.onDelta;
    const timed: ChatRequest = {
      ...request,
      onDelta: (text) => {
        timing.firstText();
        onDelta?.(text);
      },
    };
    try {
      const result = await this.chatWithRetries(timed);
      timing.succeeded();
      return result;
    } catch (error) {
      timing.failed(request.signal?.aborted === true);
      throw error;
    }
  }

  private async chatWithRetries(request: ChatRequest): Promise<ChatResult> {
    const maxRetries = this.options.maxRetries ?? 2;
    const base = this.options.retryBaseMs ?? 300;
    for (let attempt = 0; ; attempt++) {
      let streamed = false;
      try {
        return await this.attempt(request, () => {
          streamed = true;
        });
      } catch (error) {
        const failure = asProviderError(error, request.signal);
        // Text already handed to the caller cannot be taken back: a retry would repeat it.
        if (!failure.retryable || streamed || attempt >= maxRetries || request.signal?.aborted) throw failure;
        const hinted = failure instanceof RetryAfterError ? failure.retryAfterMs : undefined;
        const backoff = hinted ?? base * 2 ** attempt * (0.75 + Math.random() * 0.5);
        await sleep(Math.min(backoff, maxRetryAfterMs), request.signal);
      }
    }
  }

  private async attempt(request: ChatRequest, onStreamed: () => void): Promise<ChatResult> {
    const stream = this.options.stream ?? true;
    const timeout = AbortSignal.timeout(this.options.timeoutMs ?? 30_000);
    const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: stream ? 'text/event-stream' : 'application/json',
      ...this.options.extraHeaders,
    };
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    const url = `${this.options.baseUrl.replace(/\/+$/, '')}/chat/completions`;
    let response: Response;
    try {
      response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(this.body(request, stream)), signal });
    } catch (error) {
      throw transportError(error, timeout, request.signal);
    }
    if (!response.ok) throw await statusError(response);
    try {
      if (!stream || !(response.headers.get('content-type') ?? '').includes('text/event-stream')) {
        return parseCompletion(await response.json());
      }
      return await readStream(response, request.onDelta, onStreamed);
    } catch (error) {
      if (error instanceof ProviderError) throw error;
      throw transportError(error, timeout, request.signal);
    }
  }

  private body(request: ChatRequest, stream: boolean): Record<string, unknown> {
    const body: Record<string, unknown> = {
      model: this.options.model,
      messages: request.messages.map(toWireMessage),
      stream,
    };
    if (request.temperature !== undefined) body.temperature = request.temperature;
    if (request.maxTokens !== undefined) body.max_tokens = request.maxTokens;
    if (request.tools && request.tools.length > 0) {
      body.tools = request.tools.map((tool) => ({
        type: 'function',
        function: { name: tool.name, description: tool.description, parameters: tool.parameters },
      }));
      if (request.toolChoice) body.tool_choice = toWireToolChoice(request.toolChoice);
    }
    return body;
  }
}

class RetryAfterError extends ProviderError {
  constructor(message: string, status: number, readonly retryAfterMs: number | undefined) {
    super(message, true, status);
  }
}

function toWireMessage(message: ChatMessage): Record<string, unknown> {
  const wire: Record<string, unknown> = { role: message.role, content: message.content };
  if (message.toolCalls && message.toolCalls.length > 0) {
    wire.tool_calls = message.toolCalls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: call.arguments },
    }));
  }
  if (message.toolCallId) wire.tool_call_id = message.toolCallId;
  return wire;
}

function toWireToolChoice(choice: ToolChoice): unknown {
  return typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.name } };
}

async function statusError(response: Response): Promise<ProviderError> {
  let detail = '';
  try {
    const text = (await response.text()).slice(0, 2000);
    const parsed = JSON.parse(text) as { error?: { message?: unknown } };
    detail = typeof parsed.error?.message === 'string' ? parsed.error.message : '';
  } catch {
    // Body is not the documented error JSON; the status alone still classifies the failure.
  }
  const message = `chat completion failed with HTTP ${response.status}${detail ? `: ${detail}` : ''}`;
  if (!retryableStatuses.has(response.status)) return new ProviderError(message, false, response.status);
  return new RetryAfterError(message, response.status, retryAfter(response.headers.get('retry-after')));
}

function retryAfter(header: string | null): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

function transportError(error: unknown, timeout: AbortSignal, caller: AbortSignal | undefined): ProviderError {
  if (caller?.aborted) return new ProviderError('chat completion cancelled', false, undefined, { cause: error });
  if (timeout.aborted) return new ProviderError('chat completion timed out', true, undefined, { cause: error });
  const reason = error instanceof Error ? error.message : String(error);
  return new ProviderError(`chat completion transport error: ${reason}`, true, undefined, { cause: error });
}

function asProviderError(error: unknown, caller: AbortSignal | undefined): ProviderError {
  if (error instanceof ProviderError) return error;
  return transportError(error, AbortSignal.abort(), caller);
}

interface WireToolCall {
  id?: string;
  index?: number;
  function?: { name?: string; arguments?: string };
}

interface WireChoice {
  message?: { content?: string | null; tool_calls?: WireToolCall[] };
  delta?: { content?: string | null; tool_calls?: WireToolCall[] };
  finish_reason?: string | null;
}

function parseCompletion(json: unknown): ChatResult {
  const choice = (json as { choices?: WireChoice[] }).choices?.[0];
  if (!choice?.message) throw new ProviderError('chat completion response has no choices[0].message', false);
  const toolCalls: ToolCall[] = (choice.message.tool_calls ?? []).map((call, index) => ({
    id: call.id ?? `call_${index}`,
    name: call.function?.name ?? '',
    arguments: call.function?.arguments ?? '{}',
  }));
  return { content: choice.message.content ?? '', toolCalls, finishReason: choice.finish_reason ?? 'stop' };
}

async function readStream(
  response: Response,
  onDelta: ((text: string) => void) | undefined,
  onStreamed: () => void,
): Promise<ChatResult> {
  if (!response.body) throw new ProviderError('chat completion stream has no body', true);
  const parser = new SseParser();
  const decoder = new TextDecoder();
  let content = '';
  let finishReason = '';
  let done = false;
  const calls = new Map<number, { id: string; name: string; arguments: string }>();
  const handle = (data: string): void => {
    if (data.trim() === '[DONE]') {
      done = true;
      return;
    }
    const chunk = JSON.parse(data) as { choices?: WireChoice[]; error?: { message?: string } };
    if (chunk.error) throw new ProviderError(`chat completion stream error: ${chunk.error.message ?? ''}`, false);
    const choice = chunk.choices?.[0];
    if (!choice) return;
    const text = choice.delta?.content;
    if (text) {
      content += text;
      onStreamed();
      onDelta?.(text);
    }
    for (const part of choice.delta?.tool_calls ?? []) {
      // Tool calls arrive in fragments keyed by index; id and name come once, arguments piecewise.
      const index = part.index ?? 0;
      const call = calls.get(index) ?? { id: '', name: '', arguments: '' };
      if (part.id) call.id = part.id;
      if (part.function?.name) call.name += part.function.name;
      if (part.function?.arguments) call.arguments += part.function.arguments;
      calls.set(index, call);
    }
    if (choice.finish_reason) finishReason = choice.finish_reason;
  };
  for await (const bytes of response.body) {
    for (const event of parser.push(decoder.decode(bytes as Uint8Array, { stream: true }))) handle(event.data);
    if (done) break;
  }
  for (const event of parser.end()) handle(event.data);
  if (!done && !finishReason) throw new ProviderError('chat completion stream ended early', true);
  const toolCalls = [...calls.entries()]
    .sort(([a], [b]) => a - b)
    .map(([index, call]) => ({ id: call.id || `call_${index}`, name: call.name, arguments: call.arguments || '{}' }));
  return { content, toolCalls, finishReason: finishReason || 'stop' };
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new ProviderError('chat completion cancelled', false));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new ProviderError('chat completion cancelled', false));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
