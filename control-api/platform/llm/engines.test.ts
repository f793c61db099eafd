import assert from 'node:assert/strict';
import { FakeChatCompletionsServer } from '../../../test/fakes/fake-chat-completions.js';
import { offlineBrain } from '../../../test/fakes/offline-brain.js';
import type { TurnRequest } from './agent-engine.js';
import { extractDate, extractDigits, extractNumber, extractBoolean, extractEnum, extractValue } from './extract.js';
import { LlmEngine } from './llm-engine.js';
import { intentMatch, OfflineEngine } from './offline-engine.js';
import { OpenAiCompatibleProvider } from './openai-compatible.js';

const base: TurnRequest = {
  instructions: 'You remind callers of appointments.',
  history: [],
  intents: [
    { name: 'confirm', description: 'caller confirms the appointment', examples: ['i will be there'] },
    { name: 'reschedule', description: 'caller wants to reschedule or change the time' },
    { name: 'cancel', description: 'caller declines or cancels' },
  ],
  variables: [{ name: 'new_date', description: 'new appointment date', kind: 'date' }],
  expressiveness: 0.5,
  today: '2026-11-21',
  replies: { opening: 'Hi Asha, can you make it?', reprompt: 'Please say yes, no or reschedule.' },
};

describe('value extraction', () => {
  it('reads yes/no in English and romanised Hindi', () => {
    assert.equal(extractBoolean('yeah sure'), true);
    assert.equal(extractBoolean('haan ji'), true);
    assert.equal(extractBoolean('nahi'), false);
    assert.equal(extractBoolean('maybe later'), undefined);
  });
  it('reads digits and number words', () => {
    assert.equal(extractNumber('I can pay 2,500 now'), 2500);
    assert.equal(extractNumber('twenty five hundred'), 2500);
    assert.equal(extractNumber('three thousand two hundred and ten'), 3210);
    assert.equal(extractNumber('no idea'), undefined);
  });
  it('resolves dates relative to the tenant day', () => {
    assert.equal(extractDate('tomorrow please', '2026-11-21'), '2026-11-22');
    assert.equal(extractDate('on 3 December', '2026-11-21'), '2026-12-03');
    assert.equal(extractDate('next monday', '2026-11-21'), '2026-11-23');
    assert.equal(extractDate('05/01/2027', '2026-11-21'), '2027-01-05');
    assert.equal(extractDate('the day after tomorrow', '2026-11-21'), '2026-11-23');
    assert.equal(extractDate('I paid it yesterday', '2026-12-01'), '2026-11-30');
    assert.equal(extractDate('tomorrow', '2026-12-31'), '2027-01-01');
  });
  it('reads a string of digits as said or typed, leading zeros kept', () => {
    assert.equal(extractDigits('my order number is one two three four five six'), '123456');
    assert.equal(extractDigits('oh four double five 1'), '04551');
    assert.equal(extractDigits('it is 123-456, thanks'), '123456');
    assert.equal(extractDigits('I want to talk to someone'), undefined);
    // Of a known length: the run that has it, else none (never a longer or shorter one).
    assert.equal(extractDigits('order 12 then one two three four five six', 6), '123456');
    assert.equal(extractDigits('one two three four five', 6), undefined);
    assert.equal(extractDigits('1234567', 6), undefined);
    assert.equal(extractValue({ kind: 'digits', length: 4 }, 'my pin is oh one two three', '2026-12-01'), '0123');
    assert.equal(extractValue({ kind: 'digits' }, 'zero zero seven', '2026-11-21'), '007');
  });

  it('refuses a calendar date that does not exist', () => {
    assert.equal(extractDate('2026-02-30', '2026-11-21'), undefined);
    assert.equal(extractDate('2028-02-29', '2026-11-21'), '2028-02-29');
  });

  it('matches the longest enum option', () => {
    assert.equal(extractEnum('I want the premium plus plan', ['premium', 'premium plus', 'basic']), 'premium plus');
  });
});

describe('OfflineEngine', () => {
  const engine = new OfflineEngine();
  it('speaks the opening template on the opening turn', async () => {
    assert.deepEqual(await engine.turn(base), { reply: 'Hi Asha, can you make it?', values: {} });
  });
  it('matches intents by example, keyword and polarity, and extracts typed values', async () => {
    assert.equal((await engine.turn({ ...base, userText: 'Yes, I will be there' })).intent, 'confirm');
    const moved = await engine.turn({ ...base, userText: 'can we reschedule to tomorrow' });
    assert.equal(moved.intent, 'reschedule');
    assert.deepEqual(moved.values, { new_date: '2026-11-22' });
    assert.equal((await engine.turn({ ...base, userText: 'no, cancel it' })).intent, 'cancel');
  });
  it('takes an intent whose captured values the turn states, all of them, though no intent words were said', async () => {
    const loan: TurnRequest = {
      ...base,
      intents: [
        { name: 'pay_now', description: 'caller pays right away', examples: ['pay now'] },
        { name: 'promise_to_pay', description: 'caller promises a later payment', examples: ['I promise to pay'], captures: ['promise_amount', 'promise_date'] },
      ],
      variables: [
        { name: 'promise_amount', description: 'amount', kind: 'number' },
        { name: 'promise_date', description: 'date', kind: 'date' },
      ],
    };
    const stated = await engine.turn({ ...loan, userText: 'I can give three thousand on the fifth of December' });
    assert.equal(stated.intent, 'promise_to_pay');
    assert.deepEqual(stated.values, { promise_amount: 3000, promise_date: '2026-12-05' });
    // Half of it is no promise yet.
    assert.equal((await engine.turn({ ...loan, userText: 'three thousand' })).intent, undefined);
  });
  it('reads a negation as a negation: "come" from "I cannot come" is no word of a cancel, nor "cancel" in "I don\'t want to cancel"', async () => {
    const intents = [
      { name: 'cancel', description: 'caller wants to cancel', examples: ['cancel it', 'I cannot come'] },
      { name: 'confirm', description: 'caller will attend', examples: ['I will come'] },
    ];
    assert.equal(intentMatch(intents, "i can't come")?.name, 'cancel');
    assert.equal(intentMatch(intents, 'can can it can do come thank well')?.name, 'confirm');
    assert.equal(intentMatch(intents, "i don't want to cancel"), undefined);
    assert.equal(intentMatch(intents, 'I don’t want to cancel'), undefined);
    // A negation is no keyword of every intent with one in its examples ("never mind" for goodbye).
    const desk = [{ name: 'goodbye', description: 'caller is done', examples: ['never mind', 'bye'] }];
    assert.equal(intentMatch(desk, 'my plant is not growing'), undefined);
    // A negated word matches a negated word by the word itself.
    assert.equal(intentMatch([{ name: 'skip', description: 'caller skips a date', examples: ["won't payday"] }], 'i will not pay'), undefined);
    assert.equal(intentMatch(intents, 'please cancel it')?.name, 'cancel');
    // A negation reaches to the next clause only.
    assert.deepEqual(intentMatch(intents, "i can't make it so cancel"), { name: 'cancel', by: 'keywords', score: 1 });
    assert.equal(intentMatch(intents, "i can't make it, I don't want to cancel"), undefined);
  });
  it('reprompts when nothing matched', async () => {
    const result = await engine.turn({ ...base, userText: 'what is the weather' });
    assert.equal(result.intent, undefined);
    assert.equal(result.reply, 'Please say yes, no or reschedule.');
  });
  describe('AnswerFlow: answers from the single best passage', () => {
    const support: TurnRequest = { ...base, intents: [], variables: [], replies: { reprompt: 'I do not know that one.' } };
    const knowledge = [
      // Retrieval order is lexical: the first passage shares only "plants" with the question.
      'Our plants are grown in Pune. Orders ship within 24 hours. Gift cards never expire.',
      'We do not ship live plants to Hawaii or Alaska. Pots ship everywhere. Delivery takes 2 to 4 days.',
    ];
    it('the most relevant sentence of the best-matching passage, not the first sentences of the first passage', async () => {
      const result = await engine.turn({ ...support, userText: 'Can you ship plants to Alaska?', knowledge });
      assert.equal(result.reply, 'We do not ship live plants to Hawaii or Alaska. Pots ship everywhere.');
    });
    it('one sentence when its neighbours do not belong to the answer', async () => {
      const result = await engine.turn({ ...support, userText: 'how long does delivery take', knowledge });
      assert.equal(result.reply, 'Delivery takes 2 to 4 days.');
    });
    it('says it does not know (the reprompt) when passages only share a word with the question', async () => {
      const result = await engine.turn({ ...support, userText: 'Do gift card refunds need a manager approval?', knowledge: ['Gift cards never expire. Orders ship within 24 hours.'] });
      assert.equal(result.reply, 'I do not know that one.');
    });
  });
});

describe('LlmEngine over the chat-completions wire', () => {
  let server: FakeChatCompletionsServer;
  let engine: LlmEngine;
  before(async () => {
    server = await new FakeChatCompletionsServer(offlineBrain('2026-11-21')).start();
    engine = new LlmEngine(new OpenAiCompatibleProvider({ baseUrl: server.baseUrl, model: 'm' }));
  });
  after(() => server.stop());

  it('sends one route_turn tool with the declared intents and variable schema', async () => {
    const result = await engine.turn({ ...base, userText: 'please reschedule to 3 December' });
    assert.equal(result.intent, 'reschedule');
    assert.deepEqual(result.values, { new_date: '2026-12-03' });
    const tool = server.requests.at(-1)?.body.tools?.[0]?.function;
    assert.equal(tool?.name, 'route_turn');
    assert.match(tool?.description ?? '', /- confirm: caller confirms/);
  });

  it('drops an intent the block never declared and values of the wrong kind', async () => {
    server.enqueue({ content: 'ok', toolCalls: [{ name: 'route_turn', arguments: { intent: 'hack', variables: { new_date: 'not a date' } } }] });
    assert.deepEqual(await engine.turn({ ...base, userText: 'x' }), { reply: 'ok', values: {} });
  });

  it('asks for a digit string of its length and drops one of another length', async () => {
    const order = { ...base, variables: [{ name: 'order_number', description: 'the order number', kind: 'digits' as const, length: 6 }] };
    server.enqueue({ content: 'ok', toolCalls: [{ name: 'route_turn', arguments: { variables: { order_number: '12345' } } }] });
    assert.deepEqual(await engine.turn({ ...order, userText: 'one two three four five' }), { reply: 'ok', values: {} });
    const parameters = server.requests.at(-1)?.body.tools?.[0]?.function.parameters as { properties: { variables: { properties: Record<string, { pattern?: string }> } } };
    assert.equal(parameters.properties.variables.properties.order_number?.pattern, '^[0-9]{6}$');
    server.enqueue({ content: 'ok', toolCalls: [{ name: 'route_turn', arguments: { variables: { order_number: '012345' } } }] });
    assert.deepEqual((await engine.turn({ ...order, userText: 'oh one two three four five' })).values, { order_number: '012345' });
  });
});
