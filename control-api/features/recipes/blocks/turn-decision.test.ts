import assert from 'node:assert/strict';
import { fakeContext, heard, press, say, silence } from '../../../../test/fakes/fake-block-context.js';
import type { AgentEngine, TurnRequest, TurnResult } from '../../../platform/llm/agent-engine.js';
import { OfflineEngine } from '../../../platform/llm/offline-engine.js';
import { askSettingsSchema, smartAiSettingsSchema } from '../../../model/recipes/recipe-schema.js';
import type { KnowledgeSearch } from '../runtime/services.js';
import { askBlock } from './ask.js';
import { smartAiBlock } from './smart-ai.js';


/** The appointment question of the example recipe, in short. Today is Saturday 21 November 2026. */
const appointment = smartAiSettingsSchema.parse({
  prompt: 'Confirm the appointment.\nOpening: Will you be able to make it?\nReprompt: Sorry, will you be able to come? You can also ask to reschedule or cancel.\nReply cancel: Okay, I have cancelled the appointment.',
  retryLimit: 3,
  intents: [
    { name: 'reschedule', description: 'caller wants to move the appointment', examples: ['reschedule', 'another day'], captures: ['new_date'], confirmation: 'you want to move the appointment' },
    { name: 'cancel', description: 'caller says no and wants to cancel', examples: ['no', 'cancel it', 'no please cancel it'], captures: [], confirmation: 'you want to cancel the appointment' },
    { name: 'confirm', description: 'caller says yes and will attend', examples: ['yes', 'I will be there'], captures: [], action: false, confirmation: 'you will come to the appointment' },
  ],
  variables: [{ name: 'new_date', type: 'date', description: 'the new date the caller prefers', question: 'Which day would suit you?' }],
  intentVariable: 'reminder_intent',
});

const loan = smartAiSettingsSchema.parse({
  prompt: 'Settle the loan.\nOpening: How would you like to settle this?\nReprompt: Would you like a payment link now, or can you promise a date and an amount?',
  intents: [
    { name: 'pay_now', description: 'caller pays now with a link', examples: ['pay now', 'send me the link'], captures: [] },
    { name: 'promise_to_pay', description: 'caller promises to pay later', examples: ['I promise to pay'], captures: ['promise_amount', 'promise_date'], confirmation: 'you will pay {{promise_amount}} on {{promise_date}}' },
    { name: 'dispute', description: 'caller disputes the amount or already paid', examples: ['I already paid', 'the amount is wrong'], captures: [] },
  ],
  variables: [
    { name: 'promise_amount', type: 'number', description: 'amount the caller promises to pay' },
    { name: 'promise_date', type: 'date', description: 'date the caller promises to pay on' },
  ],
});

describe('decisions that never act on a doubt', () => {
  it('"nope can we to it that we am" (a no among words the block did not understand) is no cancellation', async () => {
    const ctx = fakeContext({ turns: [heard('nope can we to it that we am', 0.92, 'no'), heard('no', 1, 'no'), silence, silence] });
    assert.deepEqual(await smartAiBlock.run(ctx, appointment, ctx.signal), { exit: 'fallback' });
    // The meaning is checked, not a word ("Sorry, did you say: no?" -> "yes" cancelled before).
    assert.equal(ctx.said[1]?.text, 'Just to check: you want to cancel the appointment?');
    assert.equal(ctx.said[2]?.text, 'Sorry, will you be able to come? You can also ask to reschedule or cancel.');
    assert.ok(!ctx.said.some((s) => /did you say/i.test(s.text)));
    assert.equal(ctx.vars.get('reminder_intent'), undefined);
    // The same with "no", which is itself one of the intent's examples: a bare yes/no example is the yes/no.
    const no = fakeContext({ turns: [heard('no please can going', 0.9, 'no'), heard('no', 1, 'no'), silence, silence] });
    assert.deepEqual(await smartAiBlock.run(no, appointment, no.signal), { exit: 'fallback' });
    assert.equal(no.said[1]?.text, 'Just to check: you want to cancel the appointment?');
  });

  it('a plain no, or the intent said in its own words, is acted on at once; a yes to the meaning acts too', async () => {
    for (const turn of [heard('no', 0.95, 'no'), heard('no please cancel it', 0.9, 'intent:cancel')]) {
      const ctx = fakeContext({ turns: [turn] });
      assert.deepEqual(await smartAiBlock.run(ctx, appointment, ctx.signal), { exit: 'cancel' }, turn.kind === 'utterance' ? turn.text : '');
      assert.deepEqual(ctx.notes, []);
    }
    const checked = fakeContext({ turns: [heard('nope am', 0.9, 'no'), heard('yes', 1, 'yes')] });
    assert.deepEqual(await smartAiBlock.run(checked, appointment, checked.signal), { exit: 'cancel' });
    assert.deepEqual(checked.said.map((s) => s.text).slice(1), ['Just to check: you want to cancel the appointment?', 'Okay, I have cancelled the appointment.']);
  });

  it('one word of an intent that acts, among words that name nothing, is checked: "Play some music" heard "come human" is no transfer', async () => {
    const desk = smartAiSettingsSchema.parse({
      prompt: 'Help the caller.\nOpening: How can I help?\nReprompt: Sorry, how can I help?',
      intents: [
        { name: 'human', description: 'caller wants a person', examples: ['human', 'agent', 'talk to a person'], captures: [], confirmation: 'you want to talk to a person' },
        { name: 'goodbye', description: 'caller is done', examples: ['goodbye', 'bye'], captures: [], action: false },
      ],
    });
    // The offline recogniser's reading (a likelihood gap per rival): the transfer waits for a yes.
    const lonely = fakeContext({ turns: [heard('come human', 0.65, 'intent:human', [{ text: 'come you it', confidence: 0.6, scoreGap: 8.4 }]), heard('no', 1, 'no'), silence, silence] });
    assert.deepEqual(await smartAiBlock.run(lonely, desk, lonely.signal), { exit: 'fallback' });
    assert.equal(lonely.said[1]?.text, 'Just to check: you want to talk to a person?');
    // The intent in two of its own words, or its one-word example alone, is acted on at once.
    for (const text of ['talk to a person', 'human']) {
      const ctx = fakeContext({ turns: [heard(text, 0.9, 'intent:human', [{ text: 'you it', confidence: 0.5, scoreGap: 9 }])] });
      assert.deepEqual(await smartAiBlock.run(ctx, desk, ctx.signal), { exit: 'human' }, text);
    }
  });

  it('one word of an informational intent among words that mean nothing ("confirm will confirm" at 0.79) is heard alone; an example of several words is not', async () => {
    // As in the example recipe, "confirm" is one of the intent's examples.
    const named = smartAiSettingsSchema.parse({ ...appointment, intents: appointment.intents.map((i) => (i.name === 'confirm' ? { ...i, examples: [...i.examples, 'confirm'] } : i)) });
    const lone = fakeContext({ turns: [heard('confirm will confirm', 0.79, 'intent:confirm', [{ text: 'will am', confidence: 0.2, scoreGap: 6.2 }]), heard('no', 1, 'no'), silence, silence] });
    assert.deepEqual(await smartAiBlock.run(lone, named, lone.signal), { exit: 'fallback' });
    assert.equal(lone.said[1]?.text, 'Just to check: you will come to the appointment?');
    const example = fakeContext({ turns: [heard('i will be there and', 0.79, 'intent:confirm', [{ text: 'and', confidence: 0.2, scoreGap: 7.3 }])] });
    assert.deepEqual(await smartAiBlock.run(example, named, example.signal), { exit: 'confirm' });
  });

  it('a yes beside a close reading of the same audio that also holds a no ("yep please can" / "yep please can nope" for "No, please cancel") is checked', async () => {
    const ctx = fakeContext({ turns: [heard('yep please can', 0.77, 'yes', [{ text: 'yep please can nope', confidence: 0.8, scoreGap: -2.5 }]), heard('no', 1, 'no'), silence, silence] });
    assert.deepEqual(await smartAiBlock.run(ctx, appointment, ctx.signal), { exit: 'fallback' });
    assert.match(ctx.said[1]?.text ?? '', /^Just to check: /);
    // An opposite word the best reading holds too is no news ("yes no problem").
    const both = fakeContext({ turns: [heard('yes no problem', 0.9, 'yes', [{ text: 'yes no', confidence: 0.8, scoreGap: 0.5 }])] });
    assert.deepEqual(await smartAiBlock.run(both, appointment, both.signal), { exit: 'confirm' });
    // A rival with no opposite word and the same meaning leaves the yes as it is.
    const plain = fakeContext({ turns: [heard('yep please can', 0.77, 'yes', [{ text: 'yep please', confidence: 0.8, scoreGap: 0.5 }])] });
    assert.deepEqual(await smartAiBlock.run(plain, appointment, plain.signal), { exit: 'confirm' });
  });

  it('a yes that goes on is framed ("yes I will come"), unless the rest turns against it; informational intents are exempt', async () => {
    const acting = smartAiSettingsSchema.parse({ ...appointment, intents: appointment.intents.map((i) => ({ ...i, action: true })) });
    const framed = fakeContext({ turns: [heard('yes i will to it', 0.9, 'yes')] });
    assert.deepEqual(await smartAiBlock.run(framed, acting, framed.signal), { exit: 'confirm' });
    assert.deepEqual(framed.notes, []);
    const against = fakeContext({ turns: [heard('yes but not monday', 0.9, 'yes'), heard('no', 1, 'no'), silence, silence] });
    assert.deepEqual(await smartAiBlock.run(against, acting, against.signal), { exit: 'fallback' });
    assert.equal(against.said[1]?.text, 'Just to check: you will come to the appointment?');
    // action: false: the same words are acted on.
    const informational = fakeContext({ turns: [heard('yes but not monday', 0.9, 'yes')] });
    assert.deepEqual(await smartAiBlock.run(informational, appointment, informational.signal), { exit: 'confirm' });
  });

  it('a date heard in the noise beside an intent is read back as it would be stored; after a no only the day is asked for', async () => {
    // The other noise realisation heard no date: "tomorrow" is not something to write down.
    const otherNoise = [{ text: "i'm that another day", confidence: 0.8, scoreGap: 0 }];
    const ctx = fakeContext({ turns: [heard("i'm tomorrow that another day", 0.9, 'intent:reschedule', otherNoise), heard('no', 1, 'no'), heard('the third of december', 0.95, '')] });
    assert.deepEqual(await smartAiBlock.run(ctx, appointment, ctx.signal), { exit: 'reschedule' });
    assert.deepEqual(ctx.said.map((s) => s.text).slice(1, 3), ['Just to check: you want to move the appointment, Sunday 22 November?', 'Sorry about that. Which day would suit you?']);
    assert.equal(ctx.vars.get('new_date'), '2026-12-03');
    assert.equal(ctx.vars.get('reminder_intent'), 'reschedule');
    // Heard the same under both realisations, the date is acted on at once.
    const stable = fakeContext({ turns: [heard('reschedule to tomorrow', 0.9, 'intent:reschedule', [{ text: 'reschedule to tomorrow', confidence: 0.9, scoreGap: 0 }])] });
    assert.deepEqual(await smartAiBlock.run(stable, appointment, stable.signal), { exit: 'reschedule' });
    assert.equal(stable.vars.get('new_date'), '2026-11-22');
  });

  it('no value is stored from a turn that did not decide the block, nor one the exit does not capture', async () => {
    // "I already paid it yesterday": a dispute; its "it" heard as "eight" is no promised amount.
    const ctx = fakeContext({ turns: [heard('eight', 0.9, ''), heard('i already paid eight yesterday', 0.9, 'intent:dispute')] });
    assert.deepEqual(await smartAiBlock.run(ctx, loan, ctx.signal), { exit: 'dispute' });
    assert.deepEqual(ctx.variables(), {});
    // A cancellation stores no new date.
    const cancelled = fakeContext({ turns: [heard('no please cancel it monday', 0.9, 'intent:cancel')] });
    assert.deepEqual(await smartAiBlock.run(cancelled, appointment, cancelled.signal), { exit: 'cancel' });
    assert.equal(cancelled.vars.get('new_date'), undefined);
  });

  it('a promise said as an amount and a date is a promise, checked first (values alone do not say what is wanted); read back in its own words', async () => {
    const stated = fakeContext({ turns: [heard('three thousand on the fifth of december', 0.95, ''), heard('yes', 1, 'yes')] });
    assert.deepEqual(await smartAiBlock.run(stated, loan, stated.signal), { exit: 'promise_to_pay' });
    assert.equal(stated.said[1]?.text, 'Just to check: you will pay 3000 on Saturday 5 December?');
    assert.deepEqual(stated.variables(), { promise_amount: 3000, promise_date: '2026-12-05' });
    // "haan ji" heard as "monday" is no reschedule: a date alone is checked, and denied.
    const stray = fakeContext({ turns: [heard('monday', 0.9, ''), heard('no', 1, 'no'), silence, silence] });
    assert.deepEqual(await smartAiBlock.run(stray, appointment, stray.signal), { exit: 'fallback' });
    assert.equal(stray.said[1]?.text, 'Just to check: you want to move the appointment, Monday 23 November?');
    // Denied, the reschedule is no longer assumed ("Which day would suit you?" would take the next
    // mishearing as the new date), and the same date heard again is checked again, never stored.
    const again = fakeContext({ turns: [heard('sunday', 0.9, ''), heard('nope', 1, 'no'), heard('sunday', 0.9, ''), heard('no', 1, 'no'), silence] });
    assert.deepEqual(await smartAiBlock.run(again, appointment, again.signal), { exit: 'fallback' });
    assert.deepEqual(again.said.map((s) => s.text).slice(1, 4), [
      'Just to check: you want to move the appointment, Sunday 22 November?',
      'Sorry, will you be able to come? You can also ask to reschedule or cancel.',
      'Just to check: you want to move the appointment, Sunday 22 November?',
    ]);
    assert.deepEqual(again.variables(), {});
    // An example that names a day ("reschedule to next monday") does not make "monday" a reschedule said.
    const withDay = smartAiSettingsSchema.parse({ ...appointment, intents: appointment.intents.map((i) => (i.name === 'reschedule' ? { ...i, examples: [...i.examples, 'reschedule to next monday'] } : i)) });
    const day = fakeContext({ turns: [heard('monday', 1, ''), heard('nope', 1, 'no'), silence, silence] });
    assert.deepEqual(await smartAiBlock.run(day, withDay, day.signal), { exit: 'fallback' });
    assert.equal(day.said[1]?.text, 'Just to check: you want to move the appointment, Monday 23 November?');
    // Said with the intent's own words, it is acted on at once.
    const said = fakeContext({ turns: [heard('i promise to pay three thousand on the fifth of december', 0.95, 'intent:promise_to_pay')] });
    assert.deepEqual(await smartAiBlock.run(said, loan, said.signal), { exit: 'promise_to_pay' });
    assert.deepEqual(said.notes, []);
    const unsure = fakeContext({ turns: [heard('i can pay three thousand on the fifth of december', 0.5, ''), heard('no', 1, 'no'), heard('i promise to pay two thousand on the fifth of december', 0.95, 'intent:promise_to_pay')] });
    assert.deepEqual(await smartAiBlock.run(unsure, loan, unsure.signal), { exit: 'promise_to_pay' });
    // The promise itself was inferred at a low confidence: after the no, the block's question again, not "the amount again?".
    assert.deepEqual(unsure.said.map((s) => s.text).slice(1, 3), [
      'Just to check: you will pay 3000 on Saturday 5 December?',
      'Would you like a payment link now, or can you promise a date and an amount?',
    ]);
    assert.deepEqual(unsure.variables(), { promise_amount: 2000, promise_date: '2026-12-05' });
    // An amount run into the date's day ("two thousand nine fifth": 2009 on the 5th, or 2000 on the 9th?) is read back.
    const runTogether = fakeContext({ turns: [heard('i can give two thousand nine fifth of december', 0.95, 'intent:promise_to_pay'), heard('no', 1, 'no'), silence, silence] });
    await smartAiBlock.run(runTogether, loan, runTogether.signal);
    assert.equal(runTogether.said[1]?.text, 'Just to check: you will pay 2009 on Saturday 5 December?');
    assert.deepEqual(runTogether.variables(), {});
    // "one thousand by Monday" heard "one thousand five monday": the amount runs into the weekday (1005?), read back.
    const byDay = fakeContext({ turns: [heard('i will pay one thousand five monday', 1, 'intent:promise_to_pay'), heard('no', 1, 'no'), silence, silence] });
    await smartAiBlock.run(byDay, loan, byDay.signal);
    assert.equal(byDay.said[1]?.text, 'Just to check: you will pay 1005 on Monday 23 November?');
    assert.deepEqual(byDay.variables(), {});
    // "one thousand five hundred want fifth december": a word between them, acted on.
    const apart = fakeContext({ turns: [heard('i promise to pay one thousand five hundred want fifth december', 0.95, 'intent:promise_to_pay')] });
    assert.deepEqual(await smartAiBlock.run(apart, loan, apart.signal), { exit: 'promise_to_pay' });
    assert.deepEqual(apart.notes, []);
  });

  it('a promise with part of it said asks for the rest before it is acted on, and keeps what was said', async () => {
    const withQuestions = smartAiSettingsSchema.parse({
      ...loan,
      variables: loan.variables.map((v) => ({ ...v, question: v.name === 'promise_amount' ? 'How much can you pay?' : 'On which day can you pay?' })),
    });
    // "i will pay want and on monday": the date said, the amount not.
    const ctx = fakeContext({ turns: [heard('i promise to pay on monday', 0.95, 'intent:promise_to_pay'), heard('three thousand', 0.95, '')] });
    assert.deepEqual(await smartAiBlock.run(ctx, withQuestions, ctx.signal), { exit: 'promise_to_pay' });
    assert.equal(ctx.said[1]?.text, 'How much can you pay?');
    assert.deepEqual(ctx.variables(), { promise_amount: 3000, promise_date: '2026-11-23' });
    assert.deepEqual(ctx.notes.map((n) => [n.kind, n.reason]), [['reprompt', 'missingValues']]);
    // Nothing stored while it waits: the caller hangs up after the question and the record holds no date.
    const left = fakeContext({ turns: [heard('i promise to pay on monday', 0.95, 'intent:promise_to_pay'), silence, silence, silence] });
    assert.deepEqual(await smartAiBlock.run(left, withQuestions, left.signal), { exit: 'fallback' });
    assert.deepEqual(left.variables(), {});
    // Without a question of its own, the block names what it lacks; none of the values said: the intent as the recipe made it.
    const bare = fakeContext({ turns: [heard('i promise to pay three thousand', 0.95, 'intent:promise_to_pay'), heard('on the fifth of december', 0.95, '')] });
    assert.deepEqual(await smartAiBlock.run(bare, loan, bare.signal), { exit: 'promise_to_pay' });
    assert.equal(bare.said[1]?.text, 'Could you tell me the date you promise to pay on?');
    const none = fakeContext({ turns: [heard('i promise to pay', 0.95, 'intent:promise_to_pay')] });
    assert.deepEqual(await smartAiBlock.run(none, loan, none.signal), { exit: 'promise_to_pay' });
    // A value the run already holds (a campaign's variable) is no missing piece.
    const held = fakeContext({ turns: [heard('i promise to pay on monday', 0.95, 'intent:promise_to_pay')], variables: { promise_amount: 3000 } });
    assert.deepEqual(await smartAiBlock.run(held, withQuestions, held.signal), { exit: 'promise_to_pay' });
    assert.equal(held.vars.get('promise_date'), '2026-11-23');
    // No turn left for the answer (retry limit 1): acted on as said, never a fallback for a decided intent.
    const last = fakeContext({ turns: [heard('i promise to pay on monday', 0.95, 'intent:promise_to_pay')] });
    assert.deepEqual(await smartAiBlock.run(last, { ...withQuestions, retryLimit: 1 }, last.signal), { exit: 'promise_to_pay' });
    assert.equal(last.vars.get('promise_date'), '2026-11-23');
  });

  it('a model reply is not streamed on a turn that may be checked: a promise inferred from an amount and a date', async () => {
    const engine: AgentEngine = {
      name: 'streaming-model',
      async turn(request: TurnRequest): Promise<TurnResult> {
        const reply = request.userText === undefined ? 'How would you like to settle this?' : 'Noted, thank you.';
        request.onDelta?.(reply);
        return request.userText === undefined ? { reply, values: {} } : { reply, intent: 'promise_to_pay', values: { promise_amount: 3000, promise_date: '2026-12-05' } };
      },
    };
    const ctx = fakeContext({ engine, streaming: true, turns: [say('three thousand on the fifth of december'), say('no'), silence, silence] });
    await smartAiBlock.run(ctx, loan, ctx.signal);
    assert.equal(ctx.said[1]?.text, 'Just to check: you will pay 3000 on Saturday 5 December?');
    assert.ok(!ctx.said.some((s) => s.text.includes('Noted')), JSON.stringify(ctx.said));
    assert.deepEqual(ctx.variables(), {});
  });

  it('for any recogniser: a cloud reading with a confidence only is checked below confirmBelowConfidence', async () => {
    const unsure = fakeContext({ turns: [heard('cancel it', 0.45), heard('yes', 0.9)] });
    assert.deepEqual(await smartAiBlock.run(unsure, appointment, unsure.signal), { exit: 'cancel' });
    assert.equal(unsure.said[1]?.text, 'Just to check: you want to cancel the appointment?');
    const sure = fakeContext({ turns: [heard('cancel it', 0.93)] });
    assert.deepEqual(await smartAiBlock.run(sure, appointment, sure.signal), { exit: 'cancel' });
    assert.deepEqual(sure.notes, []);
  });

  it('a reading that decides nothing beside one as likely that does is checked with the caller: "no, the fifth of December" heard "nope that am"', async () => {
    const ask = askSettingsSchema.parse({ prompt: 'Opening: Which day would suit you?', variables: [{ name: 'new_date', type: 'date', description: 'the new date', question: 'Which day would suit you?' }] });
    const readings = [
      { text: 'the fifth of december', confidence: 0.74, scoreGap: 3.7 },
      { text: 'the fifth of december', confidence: 0.74, scoreGap: 0 },
    ];
    const ctx = fakeContext({ turns: [heard('nope that am', 0.85, 'no', readings), heard('yes', 1, 'yes')] });
    assert.deepEqual(await askBlock.run(ctx, ask, ctx.signal), { exit: 'next' });
    assert.equal(ctx.said[1]?.text, 'Just to check: Saturday 5 December?');
    assert.equal(ctx.vars.get('new_date'), '2026-12-05');
    // Heard that way under both noise realisations, the date 3.7 per 10 ms behind: still offered
    // (offering is a question, never an action); one far behind (7) is not.
    const behind = fakeContext({ turns: [heard('nope that am', 0.85, 'no', [readings[0]!]), heard('yes', 1, 'yes')] });
    assert.deepEqual(await askBlock.run(behind, ask, behind.signal), { exit: 'next' });
    const far = fakeContext({ turns: [heard('nope that am', 0.85, 'no', [{ ...readings[0]!, scoreGap: 7 }]), silence, silence, silence] });
    assert.deepEqual(await askBlock.run(far, ask, far.signal), { exit: 'fallback' });
    assert.ok(!far.said.some((s) => s.text.startsWith('Just to check')));
  });

  it('a reading with no valid value is asked again, never "did you say <noise>?"', async () => {
    // A model that returns a day that does not exist.
    const engine: AgentEngine = {
      name: 'invalid-date',
      async turn(request: TurnRequest): Promise<TurnResult> {
        if (request.userText === undefined) return { reply: 'Which date would suit you?', values: {} };
        return request.userText === 'the thirtieth of february' ? { reply: '', values: {} } : new OfflineEngine().turn(request);
      },
    };
    const ask = askSettingsSchema.parse({ prompt: 'Ask for a date.\nReprompt: Please tell me a date.', variables: [{ name: 'new_date', type: 'date', description: 'the new date' }] });
    const ctx = fakeContext({ engine, turns: [heard('the thirtieth of february', 0.9, ''), heard('the third of december', 0.95, '')] });
    assert.deepEqual(await askBlock.run(ctx, ask, ctx.signal), { exit: 'next' });
    assert.equal(ctx.said[1]?.text, 'Please tell me a date.');
    assert.ok(!ctx.notes.some((n) => n.kind === 'confirm'));
  });

  it('the check can always be interrupted, even in a block that cannot be', async () => {
    const ctx = fakeContext({ turns: [heard('cancel it', 0.45), heard('yes', 0.9)] });
    await smartAiBlock.run(ctx, { ...appointment, bargeIn: false }, ctx.signal);
    assert.deepEqual(ctx.said.map((s) => s.bargeIn), [false, true, false]);
  });

  it('words said over a closing line are the block\'s first answer: no question first', async () => {
    const ctx = fakeContext({ carried: heard('reschedule to the fifth of december', 0.95, 'intent:reschedule') });
    assert.deepEqual(await smartAiBlock.run(ctx, appointment, ctx.signal), { exit: 'reschedule' });
    assert.equal(ctx.vars.get('new_date'), '2026-12-05');
    assert.ok(!ctx.said.some((s) => s.text.includes('Will you be able to make it?')));
  });
});

describe('an Ask that asks like a person and reads a number back digit by digit', () => {
  const order = askSettingsSchema.parse({ prompt: 'Ask for the order number.', variables: [{ name: 'order_number', type: 'digits', description: 'The order number, digits only' }] });

  it('asks a question built from the block, with its keypad hint, never the description pasted in; a spoken number is read back, a keyed one is not', async () => {
    const ctx = fakeContext({ turns: [heard('one two three four five six', 0.95, ''), heard('yes', 1, 'yes')] });
    assert.deepEqual(await askBlock.run(ctx, order, ctx.signal), { exit: 'next' });
    assert.equal(ctx.said[0]?.text, 'Could you tell me the order number? You can also key it in, then press hash.');
    assert.deepEqual(ctx.said[1], { text: 'Just to check: 123456?', bargeIn: true, spellOut: ['123456'] });
    assert.equal(ctx.vars.get('order_number'), '123456');
    // Typed text (the simulator, a chat) carries no confidence: no recogniser to doubt.
    const typed = fakeContext({ turns: [{ kind: 'utterance', text: 'my order is 123456' }] });
    assert.deepEqual(await askBlock.run(typed, order, typed.signal), { exit: 'next' });
    assert.equal(typed.vars.get('order_number'), '123456');
    assert.deepEqual(typed.notes, []);
    assert.deepEqual(ctx.expectations[0]?.values, ['digits']);
    // A prompt said to the caller is their question; it names the keypad, so no hint is added.
    const keyed = fakeContext({ turns: [press('42')] });
    await askBlock.run(keyed, { ...order, prompt: 'Please key in your order number, then press hash.' }, keyed.signal);
    assert.equal(keyed.said[0]?.text, 'Please key in your order number, then press hash.');
    const star = fakeContext({ turns: [press('0042')] });
    await askBlock.run(star, { ...order, dtmf: { ...order.dtmf, terminator: '*' } }, star.signal);
    assert.match(star.said[0]?.text ?? '', /then press star\.$/);
    assert.equal(star.vars.get('order_number'), '0042');
  });

  it('an unsure number is read back digit by digit (spellOut), and asked for alone after a no', async () => {
    const ctx = fakeContext({ turns: [heard('one two three four five six', 0.5, ''), heard('no', 1, 'no'), press('123457')] });
    assert.deepEqual(await askBlock.run(ctx, order, ctx.signal), { exit: 'next' });
    assert.deepEqual(ctx.said[1], { text: 'Just to check: 123456?', bargeIn: true, spellOut: ['123456'] });
    assert.equal(ctx.said[2]?.text, 'Sorry about that. Could you tell me the order number again? You can also key it in, then press hash.');
    assert.equal(ctx.vars.get('order_number'), '123457');
    // "one two three four five six" heard "want three four five five": where it begins cannot be told.
    const soundAlike = fakeContext({ turns: [heard('want three four five five', 0.64, ''), heard('no', 1, 'no'), press('123456')] });
    assert.deepEqual(await askBlock.run(soundAlike, order, soundAlike.signal), { exit: 'next' });
    assert.equal(soundAlike.said[1]?.text, 'Just to check: 3455?');
    assert.equal(soundAlike.vars.get('order_number'), '123456');
  });
});

describe('knowledge answers questions only, then asks whether there is anything else', () => {
  const passages: KnowledgeSearch = {
    async search() {
      return [{ documentId: 'd', title: 'Refunds', text: 'Refunds are processed within 5 to 7 working days.', rank: 1 }];
    },
  };
  const support = smartAiSettingsSchema.parse({
    prompt: 'Help.\nOpening: How can I help you today?\nReprompt: What would you like to know?',
    retryLimit: 2,
    answerFlow: { enabled: true, documentTags: ['support'] },
    intents: [{ name: 'goodbye', description: 'caller is done', examples: ['bye', 'goodbye'], action: false }],
  });

  it('a farewell that shares a word with a passage is no question: "actually never mind, refund it, bye"', async () => {
    const searched: string[] = [];
    const knowledge: KnowledgeSearch = { search: async (tenant, query, tags, limit) => (searched.push(query), passages.search(tenant, query, tags, limit)) };
    const ctx = fakeContext({ services: { knowledge }, turns: [say('actually never mind the refund processed'), say('bye')] });
    assert.deepEqual(await smartAiBlock.run(ctx, support, ctx.signal), { exit: 'goodbye' });
    assert.deepEqual(searched, []);
    assert.equal(ctx.said[1]?.text, 'What would you like to know?');
  });

  it('an answer is followed by "Is there anything else I can help you with?"', async () => {
    const ctx = fakeContext({ services: { knowledge: passages }, turns: [say('how long are refunds processed?'), say('thanks bye')] });
    assert.deepEqual(await smartAiBlock.run(ctx, support, ctx.signal), { exit: 'goodbye' });
    assert.equal(ctx.said[1]?.text, 'Refunds are processed within 5 to 7 working days. Is there anything else I can help you with?');
    assert.deepEqual(ctx.notes.map((n) => n.kind), ['answered']);
  });

  it("a grammar recogniser's question reading (no meaning, the library's words) is a question", async () => {
    const ctx = fakeContext({ services: { knowledge: { ...passages, vocabulary: async () => ['refunded', 'processed'] } }, turns: [heard('refunded processed', 0.8, ''), say('bye')] });
    assert.deepEqual(await smartAiBlock.run(ctx, support, ctx.signal), { exit: 'goodbye' });
    assert.match(ctx.said[1]?.text ?? '', /5 to 7 working days\. Is there anything else/);
  });
});

describe('a reading that contradicts itself is checked, not acted on', () => {
  it('a date beside a weekday it is not ("september fifteenth monday") is read back before it is stored', async () => {
    const ctx = fakeContext({ turns: [heard('reschedule to september fifteenth monday', 0.95, 'intent:reschedule'), heard('no', 1, 'no'), silence, silence, silence] });
    assert.deepEqual(await smartAiBlock.run(ctx, appointment, ctx.signal), { exit: 'fallback' });
    assert.match(ctx.said[1]?.text ?? '', /^Just to check: you want to move the appointment.*15 September\?$/);
    assert.equal(ctx.vars.get('new_date'), undefined);
    // A weekday that is the date's own is no doubt: Tuesday 15 December 2026.
    const agrees = fakeContext({ turns: [heard('reschedule to tuesday december fifteenth', 0.95, 'intent:reschedule')] });
    assert.deepEqual(await smartAiBlock.run(agrees, appointment, agrees.signal), { exit: 'reschedule' });
    assert.equal(agrees.vars.get('new_date'), '2026-12-15');
  });

  it('a date more than 60 days ahead (a month misheard) is read back first; after a no only the date is asked for', async () => {
    const far = fakeContext({ turns: [heard('i promise to pay five thousand on the tenth august', 0.9, 'intent:promise_to_pay'), heard('no', 1, 'no'), heard('the tenth of december', 0.9, ''), heard('five thousand', 0.9, ''), heard('yes', 1, 'yes')] });
    assert.deepEqual(await smartAiBlock.run(far, loan, far.signal), { exit: 'promise_to_pay' });
    assert.equal(far.notes[0]?.kind, 'confirm');
    assert.match(far.said[1]?.text ?? '', /^Just to check: you will pay 5000 on Tuesday 10 August\?$/);
    // The answer gave the date alone: the amount (denied with it) is asked for before the promise is
    // taken, and the same amount said again is read back with the new date first.
    assert.equal(far.said[3]?.text, 'Could you tell me the amount you promise to pay?');
    assert.equal(far.said[4]?.text, 'Just to check: you will pay 5000 on Thursday 10 December?');
    assert.equal(far.vars.get('promise_date'), '2026-12-10');
    assert.equal(far.vars.get('promise_amount'), 5000);
    // Within 60 days, said with the intent's own words: acted on at once.
    const near = fakeContext({ turns: [heard('i promise to pay five thousand on the tenth of january', 0.9, 'intent:promise_to_pay')] });
    assert.deepEqual(await smartAiBlock.run(near, loan, near.signal), { exit: 'promise_to_pay' });
    assert.equal(near.vars.get('promise_date'), '2027-01-10');
  });

  it('a close rival that reaches the same intent only through a no among other words, or from values alone, makes the intent doubtful', async () => {
    const rival = [{ text: 'fifteen may tenth may there am no we', confidence: 0.9, scoreGap: 0.8 }];
    const ctx = fakeContext({ turns: [heard('fifteen may cancel there am no we', 0.93, 'intent:cancel', rival), silence, silence, silence, silence] });
    assert.deepEqual(await smartAiBlock.run(ctx, appointment, ctx.signal), { exit: 'fallback' });
    assert.equal(ctx.said[1]?.text, 'Just to check: you want to cancel the appointment?');
    assert.equal(ctx.notes[0]?.kind, 'confirm');
    // The same rival far behind is no doubt.
    const sure = fakeContext({ turns: [heard('please cancel it', 0.93, 'intent:cancel', [{ ...rival[0]!, scoreGap: 6 }])] });
    assert.deepEqual(await smartAiBlock.run(sure, appointment, sure.signal), { exit: 'cancel' });
    // "two thousand" heard "two come and": the promise's words barely ahead of a reading without them.
    const inferred = [{ text: 'we okay two come and on friday', confidence: 0.9, scoreGap: 0.7 }];
    const promise = fakeContext({ turns: [heard('i will pay two come and on friday', 1, 'intent:promise_to_pay', inferred), silence, silence, silence, silence] });
    assert.deepEqual(await smartAiBlock.run(promise, loan, promise.signal), { exit: 'fallback' });
    assert.equal(promise.notes[0]?.kind, 'confirm');
    assert.equal(promise.vars.get('promise_amount'), undefined);
  });

  it('a promised amount of one digit ("i can pay eight come the") is checked; after a no the values are asked for again', async () => {
    const ctx = fakeContext({ turns: [heard('i promise to pay eight on friday', 1, 'intent:promise_to_pay'), heard('no', 1, 'no'), heard('three thousand on friday', 1, '')] });
    assert.deepEqual(await smartAiBlock.run(ctx, loan, ctx.signal), { exit: 'promise_to_pay' });
    assert.deepEqual(ctx.said.map((s) => s.text).slice(1), [
      'Just to check: you will pay 8 on Friday 27 November?',
      'Sorry about that. Could you tell me the amount you promise to pay and the date you promise to pay on again?',
    ]);
    assert.deepEqual(ctx.variables(), { promise_amount: 3000, promise_date: '2026-11-27' });
    // Ten and more is an amount as callers say one: acted on at once.
    const ten = fakeContext({ turns: [heard('i promise to pay ten on friday', 1, 'intent:promise_to_pay')] });
    assert.deepEqual(await smartAiBlock.run(ten, loan, ten.signal), { exit: 'promise_to_pay' });
    assert.equal(ten.said.length, 1);
  });

  it('an "and" beside one number only (a lost "thousand") makes the amount asked again; "two thousand and fifty" stands', async () => {
    for (const text of ['i promise to pay twelve and on friday', 'i promise to pay come and eighty on friday']) {
      const ctx = fakeContext({ turns: [heard(text, 1, 'intent:promise_to_pay'), silence, silence, silence] });
      assert.deepEqual(await smartAiBlock.run(ctx, loan, ctx.signal), { exit: 'fallback' }, text);
      assert.equal(ctx.notes[0]?.reason, 'amountInPieces', text);
      assert.equal(ctx.vars.get('promise_amount'), undefined);
    }
    const whole = fakeContext({ turns: [heard('i promise to pay two thousand and fifty on friday', 1, 'intent:promise_to_pay')] });
    assert.deepEqual(await smartAiBlock.run(whole, loan, whole.signal), { exit: 'promise_to_pay' });
    assert.equal(whole.vars.get('promise_amount'), 2050);
  });

  it('two days named ("saturday tomorrow", "today tomorrow") are read back before the date is stored; "tomorrow sunday" and "monday the day after tomorrow" agree', async () => {
    const date = askSettingsSchema.parse({ prompt: 'Opening: Which day would suit you?', variables: [{ name: 'new_date', type: 'date', description: 'the new date', question: 'Which day would suit you?' }] });
    // Today is Saturday 21 November 2026: tomorrow is Sunday the 22nd.
    for (const text of ['saturday tomorrow and', 'today tomorrow']) {
      const ctx = fakeContext({ turns: [heard(text, 0.81, ''), silence, silence, silence] });
      assert.deepEqual(await askBlock.run(ctx, date, ctx.signal), { exit: 'fallback' }, text);
      assert.match(ctx.said[1]?.text ?? '', /^Just to check: /, text);
      assert.equal(ctx.vars.get('new_date'), undefined, text);
    }
    const agrees = fakeContext({ turns: [heard('tomorrow sunday', 0.9, '')] });
    assert.deepEqual(await askBlock.run(agrees, date, agrees.signal), { exit: 'next' });
    assert.equal(agrees.vars.get('new_date'), '2026-11-22');
    // "The day after tomorrow" is Monday the 23rd, as the extractor reads it too.
    const after = fakeContext({ turns: [heard('monday the day after tomorrow', 0.9, '')] });
    assert.deepEqual(await askBlock.run(after, date, after.signal), { exit: 'next' });
    assert.equal(after.vars.get('new_date'), '2026-11-23');
  });

  it('a month beside a relative day ("thirty august tomorrow" for "The day after tomorrow") is read back; "tomorrow the twenty second of november" agrees', async () => {
    const date = askSettingsSchema.parse({ prompt: 'Opening: Which day would suit you?', variables: [{ name: 'new_date', type: 'date', description: 'the new date', question: 'Which day would suit you?' }] });
    const ctx = fakeContext({ turns: [heard('thirty august tomorrow', 0.95, ''), silence, silence, silence] });
    assert.deepEqual(await askBlock.run(ctx, date, ctx.signal), { exit: 'fallback' });
    assert.match(ctx.said[1]?.text ?? '', /^Just to check: /);
    assert.equal(ctx.vars.get('new_date'), undefined);
    // Today is Saturday 21 November 2026: tomorrow is the 22nd of November.
    const agrees = fakeContext({ turns: [heard('tomorrow the twenty second of november', 0.95, '')] });
    assert.deepEqual(await askBlock.run(agrees, date, agrees.signal), { exit: 'next' });
    assert.equal(agrees.vars.get('new_date'), '2026-11-22');
  });

  it('a value heard as one word, once or twice, over much unexplained speech ("tomorrow" at 0.61 for "How about the eleventh") is read back; a clear "tomorrow" is stored', async () => {
    const date = askSettingsSchema.parse({ prompt: 'Opening: Which day would suit you?', variables: [{ name: 'new_date', type: 'date', description: 'the new date', question: 'Which day would suit you?' }] });
    const lone = fakeContext({ turns: [heard('tomorrow', 0.61, ''), heard('no', 1, 'no'), silence, silence] });
    assert.deepEqual(await askBlock.run(lone, date, lone.signal), { exit: 'fallback' });
    assert.match(lone.said[1]?.text ?? '', /^Just to check: .*22/);
    assert.equal(lone.vars.get('new_date'), undefined);
    // The same word twice is still one word ("Any day except Monday" heard "monday monday").
    const twice = fakeContext({ turns: [heard('monday monday', 0.62, ''), heard('no', 1, 'no'), silence, silence] });
    assert.deepEqual(await askBlock.run(twice, date, twice.signal), { exit: 'fallback' });
    assert.equal(twice.vars.get('new_date'), undefined);
    const clear = fakeContext({ turns: [heard('tomorrow', 0.92, '')] });
    assert.deepEqual(await askBlock.run(clear, date, clear.signal), { exit: 'next' });
    assert.equal(clear.vars.get('new_date'), '2026-11-22');
    // A cloud recogniser's reading (no grammar meaning) is judged by confirmBelowConfidence alone.
    const cloud = fakeContext({ turns: [heard('tomorrow', 0.7)] });
    assert.deepEqual(await askBlock.run(cloud, date, cloud.signal), { exit: 'next' });
    assert.equal(cloud.vars.get('new_date'), '2026-11-22');
    // Nor is it kept towards an Ask of two values, to be stored once the other is said.
    const both = askSettingsSchema.parse({
      prompt: 'Opening: How much can you pay, and on which day?',
      variables: [
        { name: 'amount', type: 'number', description: 'the amount' },
        { name: 'day', type: 'date', description: 'the day' },
      ],
    });
    const kept = fakeContext({ turns: [heard('tomorrow', 0.61, ''), heard('five hundred', 0.95, ''), silence, silence, silence] });
    await askBlock.run(kept, both, kept.signal);
    assert.equal(kept.vars.get('day'), undefined);
  });

  it('a value heard with a hedge ("not sure am today that we" for "I\'m not sure, any day next week") is no answer stored at once', async () => {
    const date = askSettingsSchema.parse({ prompt: 'Opening: Which day would suit you?', variables: [{ name: 'new_date', type: 'date', description: 'the new date', question: 'Which day would suit you?' }] });
    const ctx = fakeContext({ turns: [heard('not sure am today that we', 0.86, 'unsure'), heard('no', 1, 'no'), silence, silence] });
    assert.deepEqual(await askBlock.run(ctx, date, ctx.signal), { exit: 'fallback' });
    assert.match(ctx.said[1]?.text ?? '', /^Just to check: /);
    assert.equal(ctx.vars.get('new_date'), undefined);
  });

  it('an intent\'s word heard alone over much unexplained speech is checked, informational exits too: "Where is my refund" heard "goodbye" at 0.61', async () => {
    const desk = smartAiSettingsSchema.parse({
      prompt: 'Help the caller.\nOpening: How can I help?\nReprompt: Sorry, how can I help?',
      intents: [{ name: 'goodbye', description: 'caller is done', examples: ['goodbye', 'bye'], captures: [], action: false, confirmation: 'that is all for today' }],
    });
    const lone = fakeContext({ turns: [heard('goodbye', 0.61, 'intent:goodbye', [{ text: 'my', confidence: 0.2, scoreGap: 4.7 }]), heard('no', 1, 'no'), silence, silence] });
    assert.deepEqual(await smartAiBlock.run(lone, desk, lone.signal), { exit: 'fallback' });
    assert.equal(lone.said[1]?.text, 'Just to check: that is all for today?');
    // A bare "bye" that is the whole of the speech is the answer.
    const bye = fakeContext({ turns: [heard('bye', 1, 'intent:goodbye', [{ text: 'my', confidence: 0.2, scoreGap: 9 }])] });
    assert.deepEqual(await smartAiBlock.run(bye, desk, bye.signal), { exit: 'goodbye' });
  });
});
