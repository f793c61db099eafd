import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback server speaking the chat-completions wire protocol: JSON responses, SSE streaming
 * with fragmented content and tool-call arguments, and error statuses for retry tests.
 */
export interface FakeToolCall {
  readonly name: string;
  readonly arguments: Record<string, unknown>;
}

export interface FakeReply {
  readonly content?: string;
  readonly toolCalls?: readonly FakeToolCall[];
  /** Non-2xx answers with the documented error body. */
  readonly status?: number;
  readonly retryAfterSeconds?: number;
  /** Never answer (timeout tests). */
  readonly hang?: boolean;
  /** Close the SSE stream after the first chunk without [DONE]. */
  readonly truncate?: boolean;
  readonly chunkDelayMs?: number;
}

export interface WireChatRequest {
  readonly model: string;
  readonly stream?: boolean;
  readonly messages: ReadonlyArray<{ role: string; content: string; tool_calls?: unknown[] }>;
  readonly tools?: ReadonlyArray<{ type: 'function'; function: { name: string; description: string; parameters: Record<string, unknown> } }>;
  readonly tool_choice?: unknown;
  readonly temperature?: number;
}

export type FakeBrain = (request: WireChatRequest) => FakeReply | Promise<FakeReply>;

export interface RecordedRequest {
  readonly body: WireChatRequest;
  readonly authorization: string | undefined;
}

export class FakeChatCompletionsServer {
  readonly requests: RecordedRequest[] = [];
  private readonly queue: FakeReply[] = [];
  private readonly sockets = new Set<import('node:net').Socket>();
  private server: Server | undefined;

  constructor(private brain: FakeBrain = () => ({ content: 'Hello from the fake model.' })) {}

  /** Replies used before the brain, one per request, in order. */
  enqueue(...replies: FakeReply[]): void {
    this.queue.push(...replies);
  }

  setBrain(brain: FakeBrain): void {
    this.brain = brain;
  }

  get baseUrl(): string {
    const address = this.server?.address() as AddressInfo | null;
    if (!address) throw new Error('fake chat server not started');
    return `http://127.0.0.1:${address.port}/v1`;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    return this;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'not found', type: 'invalid_request_error' } }));
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let body: WireChatRequest;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as WireChatRequest;
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'invalid JSON body', type: 'invalid_request_error' } }));
      return;
    }
    this.requests.push({ body, authorization: req.headers.authorization });
    const reply = this.queue.shift() ?? (await this.brain(body));
    if (reply.hang) return;
    if (reply.status && reply.status >= 400) {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (reply.retryAfterSeconds !== undefined) headers['retry-after'] = String(reply.retryAfterSeconds);
      res.writeHead(reply.status, headers).end(JSON.stringify({ error: { message: `fake error ${reply.status}`, type: 'server_error' } }));
      return;
    }
    const toolCalls = (reply.toolCalls ?? []).map((call, index) => ({
      index,
      id: `call_${index}_${this.requests.length}`,
      type: 'function' as const,
      function: { name: call.name, arguments: JSON.stringify(call.arguments) },
    }));
    const finish = toolCalls.length > 0 ? 'tool_calls' : 'stop';
    if (!body.stream) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: `chatcmpl-${this.requests.length}`,
          object: 'chat.completion',
          model: body.model,
          choices: [{ index: 0, finish_reason: finish, message: { role: 'assistant', content: reply.content ?? null, tool_calls: toolCalls.length ? toolCalls : undefined } }],
        }),
      );
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const send = async (delta: Record<string, unknown>, finishReason: string | null = null): Promise<void> => {
      const chunk = { id: `chatcmpl-${this.requests.length}`, object: 'chat.completion.chunk', model: body.model, choices: [{ index: 0, delta, finish_reason: finishReason }] };
      res.write(`data: ${JSON.stringify(chunk)}\n\n`);
      if (reply.chunkDelayMs) await new Promise((r) => setTimeout(r, reply.chunkDelayMs));
    };
    await send({ role: 'assistant', content: '' });
    for (const piece of splitWords(reply.content ?? '')) {
      await send({ content: piece });
      if (reply.truncate) {
        res.end();
        return;
      }
    }
    for (const call of toolCalls) {
      const args = call.function.arguments;
      const middle = Math.floor(args.length / 2);
      await send({ tool_calls: [{ index: call.index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] });
      await send({ tool_calls: [{ index: call.index, function: { arguments: args.slice(0, middle) } }] });
      await send({ tool_calls: [{ index: call.index, function: { arguments: args.slice(middle) } }] });
    }
    await send({}, finish);
    // A comment line and CRLF endings exercise the parser's tolerance, as real servers vary.
    res.end(': keep-alive\r\n\r\ndata: [DONE]\r\n\r\n');
  }
}

function splitWords(text: string): string[] {
  return text.match(/\S+\s*/g) ?? [];
}
