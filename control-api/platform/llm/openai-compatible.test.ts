import assert from 'node:assert/strict';
import { FakeChatCompletionsServer } from '../../../test/fakes/fake-chat-completions.js';
import { ProviderError } from './chat-provider.js';
import { OpenAiCompatibleProvider } from './openai-compatible.js';

describe('OpenAiCompatibleProvider against a loopback chat-completions server', () => {
  let server: FakeChatCompletionsServer;
  beforeEach(async () => {
    server = await new FakeChatCompletionsServer().start();
  });
  afterEach(() => server.stop());

  const provider = (extra: Partial<ConstructorParameters<typeof OpenAiCompatibleProvider>[0]> = {}): OpenAiCompatibleProvider =>
    new OpenAiCompatibleProvider({ baseUrl: server.baseUrl, model: 'test-model', apiKey: 'sk-test', retryBaseMs: 5, ...extra });

  it('streams content deltas over SSE and reassembles fragmented tool-call arguments', async () => {
    server.enqueue({ content: 'Your appointment is at ten.', toolCalls: [{ name: 'route_turn', arguments: { intent: 'confirm', variables: { n: 3 } } }] });
    const deltas: string[] = [];
    const result = await provider().chat({
      messages: [{ role: 'user', content: 'hi' }],
      tools: [{ name: 'route_turn', description: 'd', parameters: { type: 'object' } }],
      toolChoice: 'auto',
      onDelta: (t) => deltas.push(t),
    });
    assert.equal(result.content, 'Your appointment is at ten.');
    assert.ok(deltas.length > 1, 'content arrives in several deltas');
    assert.equal(deltas.join(''), result.content);
    assert.equal(result.finishReason, 'tool_calls');
    assert.equal(result.toolCalls.length, 1);
    assert.deepEqual(JSON.parse(result.toolCalls[0]?.arguments ?? ''), { intent: 'confirm', variables: { n: 3 } });
    const sent = server.requests[0];
    assert.equal(sent?.authorization, 'Bearer sk-test');
    assert.equal(sent?.body.stream, true);
    assert.equal(sent?.body.tools?.[0]?.function.name, 'route_turn');
    assert.equal(sent?.body.tool_choice, 'auto');
  });

  it('parses a plain JSON completion when streaming is off', async () => {
    server.enqueue({ content: 'plain' });
    const result = await provider({ stream: false }).chat({ messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(result.content, 'plain');
    assert.equal(server.requests[0]?.body.stream, false);
  });

  it('retries 429 and 500 and then succeeds', async () => {
    server.enqueue({ status: 429, retryAfterSeconds: 0 }, { status: 500 }, { content: 'finally' });
    const result = await provider().chat({ messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(result.content, 'finally');
    assert.equal(server.requests.length, 3);
  });

  it('gives up after maxRetries with a retryable ProviderError carrying the status', async () => {
    server.enqueue({ status: 503 }, { status: 503 });
    await assert.rejects(provider({ maxRetries: 1 }).chat({ messages: [{ role: 'user', content: 'x' }] }), (error: unknown) => {
      assert.ok(error instanceof ProviderError);
      assert.equal(error.status, 503);
      assert.equal(error.retryable, true);
      return true;
    });
    assert.equal(server.requests.length, 2);
  });

  it('does not retry a 401 and does not leak the key into the message', async () => {
    server.enqueue({ status: 401 });
    await assert.rejects(provider().chat({ messages: [{ role: 'user', content: 'x' }] }), (error: unknown) => {
      assert.ok(error instanceof ProviderError);
      assert.equal(error.retryable, false);
      assert.ok(!error.message.includes('sk-test'));
      return true;
    });
    assert.equal(server.requests.length, 1);
  });

  it('times out a server that never answers and retries it', async () => {
    server.enqueue({ hang: true }, { content: 'second try' });
    const started = Date.now();
    const result = await provider({ timeoutMs: 150 }).chat({ messages: [{ role: 'user', content: 'x' }] });
    assert.equal(result.content, 'second try');
    assert.ok(Date.now() - started < 2000);
  });

  it('never retries once text has streamed (it would be spoken twice)', async () => {
    server.enqueue({ content: 'partial answer here', truncate: true }, { content: 'should not be used' });
    const deltas: string[] = [];
    await assert.rejects(provider().chat({ messages: [{ role: 'user', content: 'x' }], onDelta: (d) => deltas.push(d) }), ProviderError);
    assert.equal(server.requests.length, 1);
    assert.deepEqual(deltas, ['partial ']);
  });

  it('stops at once when the caller aborts (hangup), without retrying', async () => {
    server.enqueue({ hang: true });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    await assert.rejects(provider().chat({ messages: [{ role: 'user', content: 'x' }], signal: controller.signal }), (error: unknown) => {
      assert.ok(error instanceof ProviderError);
      assert.equal(error.retryable, false);
      return true;
    });
    assert.equal(server.requests.length, 1);
  });
});
