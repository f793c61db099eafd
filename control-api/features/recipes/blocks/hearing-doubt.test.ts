import assert from 'node:assert/strict';
import { fakeContext, heard, press, say, silence } from '../../../../test/fakes/fake-block-context.js';
import { FakeChatCompletionsServer } from '../../../../test/fakes/fake-chat-completions.js';
import { LlmEngine } from '../../../platform/llm/llm-engine.js';
import { OpenAiCompatibleProvider } from '../../../platform/llm/openai-compatible.js';
import { askSettingsSchema, smartAiSettingsSchema } from '../../../model/recipes/recipe-schema.js';
import { askBlock } from './ask.js';
import { offlineValues } from './hearing-doubt.js';
import { smartAiBlock } from './smart-ai.js';


const reminder = smartAiSettingsSchema.parse({
  prompt: 'Confirm the appointment.\nOpening: Can you make it tomorrow?\nReprompt: Please say yes, or that you want to reschedule.',
  retryLimit: 3,
  intents: [
    { name: 'confirm', description: 'caller says yes and will attend', examples: ['yes I will come'], confirmation: 'you will come on the day' },
    { name: 'reschedule', description: 'caller wants another date', examples: ['reschedule', 'another day'] },
  ],
});

describe('hearing doubt: never a wrong branch on a doubtful hearing', () => {
  it('tells the recogniser, before the question, what the block can act on', async () => {
    const ctx = fakeContext({ turns: [heard('yes', 1, 'yes')] });
    await smartAiBlock.run(ctx, reminder, ctx.signal);
    const [expectation] = ctx.expectations;
    const groups = Object.fromEntries((expectation?.phrases ?? []).map((g) => [g.name, g.phrases]));
    assert.ok(groups['yes']?.includes('yes') && groups['no']?.includes('no'));
    assert.deepEqual(groups['intent:reschedule'], ['reschedule', 'reschedule', 'another day']);
    assert.deepEqual(expectation?.dtmf, { maxDigits: 32, terminator: '#', interDigitTimeoutMs: 3000 });
    // A SmartAI block's lines are no frame for its answers (only an Ask's one question is).
    assert.equal(expectation?.frameWords, undefined);
  });

  it('below rejectBelowConfidence: "Sorry, I did not catch that." and the question again, no branch', async () => {
    const ctx = fakeContext({ turns: [heard('reschedule', 0.2, 'intent:reschedule'), heard('yes', 1, 'yes')] });
    assert.deepEqual(await smartAiBlock.run(ctx, reminder, ctx.signal), { exit: 'confirm' });
    assert.equal(ctx.said[1]?.text, 'Sorry, I did not catch that. Please say yes, or that you want to reschedule.');
    assert.deepEqual(ctx.notes[0], { kind: 'reprompt', reason: 'lowConfidence', heard: 'reschedule', confidence: 0.2 });
  });

  it('between the thresholds: "Just to check: <meaning>?" and a plain yes lets the block act', async () => {
    const withDate = smartAiSettingsSchema.parse({ ...reminder, variables: [{ name: 'new_date', type: 'date', description: 'the new date' }] });
    const ctx = fakeContext({ turns: [heard('nope another day', 0.45, 'intent:reschedule'), heard('yes', 1, 'yes')] });
    assert.deepEqual(await smartAiBlock.run(ctx, withDate, ctx.signal), { exit: 'reschedule' });
    // The question is what the block would do, in words said to the caller (the intent's
    // description made second person), never the raw recogniser output ("nope another day").
    assert.equal(ctx.said[1]?.text, 'Just to check: you want another date?');
    assert.deepEqual(ctx.notes.map((n) => n.kind), ['confirm', 'confirmed']);
    // The answer to the question is heard without the block's values (a bare "no" came back as
    // "twelve" among amounts), then the block's expectation is back.
    const [block, confirming, after] = ctx.expectations;
    assert.deepEqual(block?.values, ['date']);
    assert.deepEqual(confirming?.phrases, block?.phrases);
    assert.deepEqual(confirming?.values, []);
    assert.deepEqual(after, block);
  });

  it('a "no" or a silence after "Just to check ...?" asks the question again; it never guesses', async () => {
    const ctx = fakeContext({ turns: [heard('reschedule', 0.5, 'intent:reschedule'), heard('no', 1, 'no'), heard('yes I will come', 0.95, 'intent:confirm')] });
    assert.deepEqual(await smartAiBlock.run(ctx, reminder, ctx.signal), { exit: 'confirm' });
    assert.deepEqual(ctx.said.map((s) => s.text), ['Can you make it tomorrow?', 'Just to check: you want another date?', 'Please say yes, or that you want to reschedule.']);
    const quiet = fakeContext({ turns: [heard('reschedule', 0.5, 'intent:reschedule'), silence, silence, silence] });
    assert.deepEqual(await smartAiBlock.run(quiet, reminder, quiet.signal), { exit: 'fallback' });
    assert.ok(quiet.notes.some((n) => n.kind === 'denied' && n.reason === 'silence'));
  });

  it('a confident correction after "Just to check ...?" is taken as the next answer', async () => {
    const ctx = fakeContext({ turns: [heard('reschedule', 0.5, 'intent:reschedule'), heard('yes I will come', 0.9, 'intent:confirm')] });
    assert.deepEqual(await smartAiBlock.run(ctx, reminder, ctx.signal), { exit: 'confirm' });
  });

  it('a confident hearing with a close rival reading that goes elsewhere is confirmed first', async () => {
    const rival = [{ text: 'reschedule', confidence: 0.9, scoreGap: 0.8 }];
    const ctx = fakeContext({ turns: [heard('yes I will come', 0.95, 'intent:confirm', rival), heard('yes', 1, 'yes')] });
    assert.deepEqual(await smartAiBlock.run(ctx, reminder, ctx.signal), { exit: 'confirm' });
    assert.equal(ctx.said[1]?.text, 'Just to check: you will come on the day?');
    // A rival far behind (score gap 6) is not a doubt.
    const clear = fakeContext({ turns: [heard('yes I will come', 0.95, 'intent:confirm', [{ text: 'reschedule', confidence: 0.9, scoreGap: 6 }])] });
    assert.deepEqual(await smartAiBlock.run(clear, reminder, clear.signal), { exit: 'confirm' });
    assert.equal(clear.said.length, 1);
  });

  it('an intent the audio fits barely better than no answer at all is confirmed first, as its meaning', async () => {
    const goodbye = smartAiSettingsSchema.parse({
      prompt: 'Help the caller.\nOpening: How can I help?',
      intents: [{ name: 'goodbye', description: 'caller is done', examples: ['goodbye', 'bye', 'thanks bye'] }],
    });
    // Without the goodbye phrases the grammar reads carrier words only, 1.5 per 10 ms behind.
    const garbage = [{ text: 'do want it it that', confidence: 0.6, scoreGap: 1.5 }];
    const asked = fakeContext({ turns: [heard('do want goodbye it it that', 0.89, 'intent:goodbye', garbage), heard('no', 1, 'no'), silence, silence, silence] });
    assert.deepEqual(await smartAiBlock.run(asked, goodbye, asked.signal), { exit: 'fallback' });
    assert.equal(asked.said[1]?.text, 'Just to check: you are done?');
    // Heard among other words, the question is still the meaning, not the words heard.
    const thanks = fakeContext({ turns: [heard('and bye', 0.84, 'intent:goodbye', [{ text: 'and', confidence: 0.5, scoreGap: 1.2 }]), heard('yes', 1, 'yes')] });
    assert.deepEqual(await smartAiBlock.run(thanks, goodbye, thanks.signal), { exit: 'goodbye' });
    assert.equal(thanks.said[1]?.text, 'Just to check: you are done?');
    // A clear lead over that reading (7 per 10 ms) is acted on at once.
    const clear = fakeContext({ turns: [heard('bye', 1, 'intent:goodbye', [{ text: 'i', confidence: 1, scoreGap: 7.3 }])] });
    assert.deepEqual(await smartAiBlock.run(clear, goodbye, clear.signal), { exit: 'goodbye' });
    assert.equal(clear.said.length, 1);
    // The same for a yes: a question heard as "yes the my", 0.5 ahead of "and the my".
    const question = fakeContext({ turns: [heard('yes the my', 0.84, 'yes', [{ text: 'and the my', confidence: 0.5, scoreGap: 0.5 }]), heard('no', 1, 'no'), silence, silence, silence] });
    assert.deepEqual(await smartAiBlock.run(question, reminder, question.signal), { exit: 'fallback' });
    // Never "did you say: yes?": the caller is asked about what a yes would do.
    assert.equal(question.said[1]?.text, 'Just to check: you will come on the day?');
    // Further behind, still not a clear lead: espeak-ng's "Let me ask my wife first" read "yep my
    // like", 4.6 ahead of "it we like", confirmed the appointment.
    const wife = fakeContext({ turns: [heard('yep my like', 1, 'yes', [{ text: 'it we like', confidence: 0.6, scoreGap: 4.6 }]), heard('no', 1, 'no'), silence, silence, silence] });
    assert.deepEqual(await smartAiBlock.run(wife, reminder, wife.signal), { exit: 'fallback' });
    assert.equal(wife.said[1]?.text, 'Just to check: you will come on the day?');
  });

  it('reads a digit string of a known length only at that length', () => {
    const order = askSettingsSchema.parse({ prompt: 'Ask for the order number.', variables: [{ name: 'order_number', type: 'digits', length: 6 }] });
    assert.deepEqual(offlineValues('one two three four five six seven', order, '2026-12-01'), {});
    assert.deepEqual(offlineValues('it is one two three four five six', order, '2026-12-01'), { order_number: '123456' });
  });

  it('a "no" with a hedge close behind it is confirmed first: "I don\'t know" heard as "no nope" cancels nothing', async () => {
    const appointment = smartAiSettingsSchema.parse({
      prompt: 'Confirm the appointment.\nOpening: Will you be able to make it?',
      intents: [{ name: 'cancel', description: 'caller cancels', examples: ['no', 'cancel it'], confirmation: 'you want to cancel the appointment' }],
    });
    const hedge = [{ text: "i don't know", confidence: 1, scoreGap: 3.9 }];
    const ctx = fakeContext({ turns: [heard('no nope', 0.83, 'no', hedge), heard('no', 1, 'no'), silence, silence, silence] });
    assert.deepEqual(await smartAiBlock.run(ctx, appointment, ctx.signal), { exit: 'fallback' });
    assert.equal(ctx.said[1]?.text, 'Just to check: you want to cancel the appointment?');
    // Far behind (6 per 10 ms or more), the no stands.
    const clear = fakeContext({ turns: [heard('no nope', 0.83, 'no', [{ text: "i don't know", confidence: 1, scoreGap: 6.5 }])] });
    assert.deepEqual(await smartAiBlock.run(clear, appointment, clear.signal), { exit: 'cancel' });
  });

  it('the same audio under the other noise realisation meaning something else (its reading, gap 0) is confirmed first', async () => {
    const otherNoise = [{ text: 'top snake', confidence: 0.61, scoreGap: 0 }];
    const ctx = fakeContext({ turns: [heard('yes I will come', 0.7, 'intent:confirm', otherNoise), heard('yes', 1, 'yes')] });
    assert.deepEqual(await smartAiBlock.run(ctx, reminder, ctx.signal), { exit: 'confirm' });
    assert.equal(ctx.said[1]?.text, 'Just to check: you will come on the day?');
  });

  describe('an amount heard in pieces', () => {
    const promise = smartAiSettingsSchema.parse({
      prompt: 'Settle the loan.\nOpening: When can you pay?\nReprompt: Tell me an amount and a date.',
      intents: [{ name: 'promise_to_pay', description: 'caller promises to pay', examples: ['I promise to pay'] }],
      variables: [
        { name: 'promise_amount', type: 'number', description: 'amount' },
        { name: 'promise_date', type: 'date', description: 'date' },
      ],
    });

    it('("three am one fifth december": 3, and a stray "one") is not acted on: "did not catch that" and the question again', async () => {
      const ctx = fakeContext({
        turns: [heard('i promise to pay three am one fifth december', 0.98, 'intent:promise_to_pay'), heard('i promise to pay three thousand on five december', 0.95, 'intent:promise_to_pay')],
      });
      assert.deepEqual(await smartAiBlock.run(ctx, promise, ctx.signal), { exit: 'promise_to_pay' });
      // Not "is it 3?": which piece was the amount cannot be told (a 5 may be the date's day).
      assert.equal(ctx.said[1]?.text, 'Sorry, I did not catch that. Tell me an amount and a date.');
      assert.deepEqual(ctx.notes, [{ kind: 'reprompt', reason: 'amountInPieces', heard: 'i promise to pay three am one fifth december', confidence: 0.98 }]);
      assert.equal(ctx.variables().promise_amount, 3000);
    });

    it('one run of number words beside the day of a date is acted on at once; typed digits never doubt', async () => {
      for (const text of ['okay i promise to pay one thousand five hundred want fifth december', 'i promise to pay three thousand on the twenty fifth of december', 'i promise to pay five hundred on december five']) {
        const ctx = fakeContext({ turns: [heard(text, 0.95, 'intent:promise_to_pay')] });
        assert.deepEqual(await smartAiBlock.run(ctx, promise, ctx.signal), { exit: 'promise_to_pay' }, text);
        assert.deepEqual(ctx.notes, [], `${text}: ${ctx.said.map((s) => s.text).join(' | ')}`);
      }
      // An open recogniser (no meaning) is not second-guessed: "3 ... 1" as digits is what it heard.
      const typed = fakeContext({ turns: [{ kind: 'utterance', text: 'I promise to pay 3000 on 5 December, 1 payment' }] });
      assert.deepEqual(await smartAiBlock.run(typed, promise, typed.signal), { exit: 'promise_to_pay' });
    });
  });

  it('a model reply is not streamed before the hearing is checked: a meaning the words do not support is confirmed first, unspoken', async () => {
    const server = await new FakeChatCompletionsServer().start();
    try {
      server.enqueue(
        { content: 'Can you make it tomorrow?', chunkDelayMs: 5 },
        // The model takes "reschedule" from words the recogniser heard as a plain yes.
        { content: 'Sure, let us find another day.', chunkDelayMs: 5, toolCalls: [{ name: 'route_turn', arguments: { intent: 'reschedule' } }] },
      );
      const engine = new LlmEngine(new OpenAiCompatibleProvider({ baseUrl: server.baseUrl, model: 'm' }));
      const ctx = fakeContext({ engine, streaming: true, turns: [heard('yes i will come', 0.9, 'yes'), heard('no', 1, 'no'), silence, silence] });
      await smartAiBlock.run(ctx, reminder, ctx.signal);
      assert.equal(ctx.said[1]?.text, 'Just to check: you want another date?');
      assert.ok(!ctx.said.some((s) => s.text.includes('another day')), `the unconfirmed reply was spoken: ${JSON.stringify(ctx.said)}`);
    } finally {
      await server.stop();
    }
  });

  it('a cloud recogniser without meaning or confidence is acted on as before', async () => {
    const ctx = fakeContext({ turns: [say('I want to reschedule please')] });
    assert.deepEqual(await smartAiBlock.run(ctx, reminder, ctx.signal), { exit: 'reschedule' });
    assert.deepEqual(ctx.notes, []);
  });
});

describe('Ask block: the question first, then a clear yes/no (issue 18)', () => {
  const atHome = askSettingsSchema.parse({
    prompt: 'Will you be at home tomorrow between 10 and 12? Please say yes or no.',
    variables: [{ name: 'at_home', type: 'boolean', description: 'whether the caller will be at home' }],
  });

  it('speaks its question (the prompt, with no Opening line) before it takes an answer', async () => {
    const ctx = fakeContext({ turns: [heard('yes i will be at home tomorrow', 0.9, 'yes')] });
    assert.deepEqual(await askBlock.run(ctx, atHome, ctx.signal), { exit: 'next' });
    assert.equal(ctx.said[0]?.text, 'Will you be at home tomorrow between 10 and 12? Please say yes or no.');
    // The recogniser is told the question's words: callers answer in them.
    assert.ok(['home', 'tomorrow', 'between'].every((w) => ctx.expectations[0]?.frameWords?.includes(w)), String(ctx.expectations[0]?.frameWords));
    assert.equal(ctx.vars.get('at_home'), true);
  });

  it('a clear no is false; words with neither reprompt', async () => {
    const no = fakeContext({ turns: [heard('no i will not', 0.9, 'no')] });
    assert.deepEqual(await askBlock.run(no, atHome, no.signal), { exit: 'next' });
    assert.equal(no.vars.get('at_home'), false);
    const neither = fakeContext({ turns: [say('what is this about'), say('yes')] });
    assert.deepEqual(await askBlock.run(neither, atHome, neither.signal), { exit: 'next' });
    assert.equal(neither.vars.get('at_home'), true);
    assert.equal(neither.said.length, 2, 'the question, then a reprompt');
  });

  it('a date heard differently under the other noise realisation is read back as it would be stored; after a no, the date is asked for alone', async () => {
    const settings = askSettingsSchema.parse({
      prompt: 'Which date would suit you better?',
      variables: [{ name: 'new_date', type: 'date', description: 'the new date' }],
    });
    const otherNoise = [{ text: 'the third of december', confidence: 1, scoreGap: 0 }];
    const ctx = fakeContext({ turns: [heard('that there eight of december', 0.9, '', otherNoise), heard('no', 1, 'no'), heard('the third of december', 1, '')] });
    assert.deepEqual(await askBlock.run(ctx, settings, ctx.signal), { exit: 'next' });
    assert.equal(ctx.said[1]?.text, 'Just to check: Tuesday 8 December?');
    assert.equal(ctx.said[2]?.text, 'Sorry about that. Could you tell me the new date again?');
    assert.match(String(ctx.vars.get('new_date')), /-12-03$/);
    // Read with no date at all under the other noise: as doubtful.
    const none = fakeContext({ turns: [heard('that there eight of december', 0.74, '', [{ text: 'there that am', confidence: 0, scoreGap: 0 }]), heard('yes', 1, 'yes')] });
    assert.deepEqual(await askBlock.run(none, settings, none.signal), { exit: 'next' });
    assert.equal(none.said[1]?.text, 'Just to check: Tuesday 8 December?');
  });

  it('"Just to check: you said yes?" answered with the answer again ("yes, I will be at home tomorrow", a yes to the grammar) is a yes', async () => {
    const ctx = fakeContext({ turns: [heard('yes i will be at home tomorrow', 0.5, 'yes'), heard('yes i will be at home tomorrow', 0.8, 'yes')] });
    assert.deepEqual(await askBlock.run(ctx, atHome, ctx.signal), { exit: 'next' });
    assert.equal(ctx.said[1]?.text, 'Just to check: you said yes?');
    assert.equal(ctx.vars.get('at_home'), true);
    assert.deepEqual(ctx.notes.map((n) => n.kind), ['confirm', 'confirmed']);
    // Doubtful (below confirmBelowConfidence) it is not: the block asks again.
    const unsure = fakeContext({ turns: [heard('yes i will be at home tomorrow', 0.5, 'yes'), heard('yes i will be at home tomorrow', 0.5, 'yes'), silence, silence, silence] });
    assert.deepEqual(await askBlock.run(unsure, atHome, unsure.signal), { exit: 'fallback' });
    assert.ok(!unsure.notes.some((n) => n.kind === 'confirmed'));
    assert.equal(unsure.vars.get('at_home'), undefined);
  });

  it('a keypad entry is one answer: 123456 for a number', async () => {
    const settings = askSettingsSchema.parse({
      prompt: 'Please enter your six digit customer number, then hash?',
      variables: [{ name: 'customer_number', type: 'number', description: 'customer number' }],
      dtmf: { maxDigits: 6 },
    });
    const ctx = fakeContext({ turns: [press('123456')] });
    assert.deepEqual(await askBlock.run(ctx, settings, ctx.signal), { exit: 'next' });
    assert.equal(ctx.vars.get('customer_number'), 123456);
    assert.equal(ctx.expectations[0]?.dtmf?.maxDigits, 6);
  });
});
