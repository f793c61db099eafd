import assert from 'node:assert/strict';
import { FakeChatCompletionsServer } from '../../../test/fakes/fake-chat-completions.js';
import type { TranscriptLine } from '../calls/call-types.js';
import type { InsightParameter } from '../../model/domain/insight-parameter.js';
import { ProviderError } from '../../platform/llm/chat-provider.js';
import { OpenAiCompatibleProvider } from '../../platform/llm/openai-compatible.js';
import { LlmInsightExtractor, recordInsightsTool } from './llm-insight-extractor.js';
import { OfflineInsightExtractor } from './offline-insight-extractor.js';

const parameters: InsightParameter[] = [
  { name: 'agreed_to_pay', description: 'Did the caller agree to pay the due amount?', type: 'boolean' },
  { name: 'amount', description: 'Amount the caller can pay', type: 'number' },
  { name: 'payment_date', description: 'When will the caller pay', type: 'date' },
  { name: 'status', description: 'Outcome of the call', type: 'enum', options: ['paid', 'promise_to_pay', 'dispute'] },
  { name: 'summary', description: 'Summary of what the caller said', type: 'text' },
  { name: 'email', description: 'Email address the caller gave', type: 'text' },
];

const line = (speaker: 'agent' | 'caller', text: string, at = 0): TranscriptLine => ({ at, speaker, text });
const transcript: TranscriptLine[] = [
  line('agent', 'Hello, this is Acme Finance. Will you agree to pay the due amount?'),
  line('caller', 'haan, I agree'),
  line('agent', 'How much can you pay?'),
  line('caller', 'I can pay 2500, promise to pay by friday'),
  line('agent', 'When will you pay?'),
  line('caller', 'tomorrow'),
];
const request = (extra: Partial<Parameters<OfflineInsightExtractor['extract']>[0]> = {}) => ({
  parameters,
  transcript,
  today: '2026-11-20',
  signal: new AbortController().signal,
  ...extra,
});

describe('OfflineInsightExtractor', () => {
  it('reads each value from the answer to the question that asked for it', async () => {
    const { values, issues } = await new OfflineInsightExtractor().extract(request());
    assert.deepEqual(values, {
      agreed_to_pay: true,
      amount: 2500,
      payment_date: '2026-11-21',
      status: 'promise_to_pay',
      summary: 'haan, I agree I can pay 2500, promise to pay by friday tomorrow',
      email: null,
    });
    assert.deepEqual(issues, []);
  });

  it('leaves a value null when nobody asked and the caller never said it', async () => {
    const { values } = await new OfflineInsightExtractor().extract(request({ transcript: [line('agent', 'Hello'), line('caller', 'hello')] }));
    assert.deepEqual(values, { agreed_to_pay: null, amount: null, payment_date: null, status: null, summary: 'hello', email: null });
  });
});

describe('LlmInsightExtractor against a loopback chat-completions server', () => {
  let server: FakeChatCompletionsServer;
  beforeEach(async () => {
    server = await new FakeChatCompletionsServer().start();
  });
  afterEach(() => server.stop());
  const extractor = (maxRetries = 2) => new LlmInsightExtractor(new OpenAiCompatibleProvider({ baseUrl: server.baseUrl, model: 'm', retryBaseMs: 1, maxRetries }));

  it('forces one structured record_insights call with a nullable, typed property per parameter', async () => {
    server.enqueue({ toolCalls: [{ name: recordInsightsTool, arguments: { agreed_to_pay: 'yes', amount: 2500, payment_date: '2026-11-21', status: 'Promise_To_Pay', summary: 'Agreed.', email: null } }] });
    const { values, issues } = await extractor().extract(request());
    assert.deepEqual(values, { agreed_to_pay: true, amount: 2500, payment_date: '2026-11-21', status: 'promise_to_pay', summary: 'Agreed.', email: null });
    assert.deepEqual(issues, []);
    const body = server.requests[0]?.body;
    assert.deepEqual(body?.tool_choice, { type: 'function', function: { name: recordInsightsTool } });
    assert.equal(body?.temperature, 0);
    assert.deepEqual(body?.tools?.[0]?.function.parameters, {
      type: 'object',
      properties: {
        agreed_to_pay: { type: ['boolean', 'null'], description: 'Did the caller agree to pay the due amount?' },
        amount: { type: ['number', 'null'], description: 'Amount the caller can pay' },
        payment_date: { type: ['string', 'null'], format: 'date', description: 'When will the caller pay (YYYY-MM-DD)' },
        status: { type: ['string', 'null'], enum: ['paid', 'promise_to_pay', 'dispute', null], description: 'Outcome of the call' },
        summary: { type: ['string', 'null'], maxLength: 300, description: 'Summary of what the caller said' },
        email: { type: ['string', 'null'], maxLength: 300, description: 'Email address the caller gave' },
      },
      required: ['agreed_to_pay', 'amount', 'payment_date', 'status', 'summary', 'email'],
      additionalProperties: false,
    });
    assert.match(body?.messages[0]?.content ?? '', /today is 2026-11-20/);
    assert.match(body?.messages[1]?.content ?? '', /Caller: I can pay 2500, promise to pay by friday/);
  });

  it('turns values that do not fit their type into null and reports why', async () => {
    server.enqueue({ toolCalls: [{ name: recordInsightsTool, arguments: { agreed_to_pay: 'maybe', amount: 'lots', payment_date: 'someday', status: 'refunded', summary: 7 } }] });
    const { values, issues } = await extractor().extract(request());
    assert.deepEqual(values, { agreed_to_pay: null, amount: null, payment_date: null, status: null, summary: '7', email: null });
    assert.equal(issues.length, 4);
  });

  it('accepts the JSON object as message text when a server ignores the forced tool', async () => {
    server.enqueue({ content: '```json\n{"agreed_to_pay": false, "amount": null}\n```' });
    const { values } = await extractor().extract(request());
    assert.equal(values.agreed_to_pay, false);
  });

  it('fails retryably on malformed output, non-retryably on a rejected request', async () => {
    server.enqueue({ content: 'I think the caller agreed.' });
    await assert.rejects(extractor().extract(request()), (e: unknown) => e instanceof ProviderError && e.retryable);
    server.enqueue({ status: 400 });
    await assert.rejects(extractor().extract(request()), (e: unknown) => e instanceof ProviderError && !e.retryable && e.status === 400);
  });

  it('retries a 503 inside the provider before giving the worker an error', async () => {
    server.enqueue({ status: 503 }, { toolCalls: [{ name: recordInsightsTool, arguments: { amount: 10 } }] });
    const { values } = await extractor().extract(request());
    assert.equal(values.amount, 10);
    assert.equal(server.requests.length, 2);
  });

  it('makes no request when the recipe has no insight parameters', async () => {
    assert.deepEqual(await extractor().extract(request({ parameters: [] })), { values: {}, issues: [] });
    assert.equal(server.requests.length, 0);
  });
});
