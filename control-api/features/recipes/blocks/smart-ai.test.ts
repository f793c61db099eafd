import assert from 'node:assert/strict';
import { fakeContext, say, silence } from '../../../../test/fakes/fake-block-context.js';
import type { AgentEngine, TurnRequest, TurnResult } from '../../../platform/llm/agent-engine.js';
import { FakeChatCompletionsServer } from '../../../../test/fakes/fake-chat-completions.js';
import { ProviderError } from '../../../platform/llm/chat-provider.js';
import { LlmEngine } from '../../../platform/llm/llm-engine.js';
import { OpenAiCompatibleProvider } from '../../../platform/llm/openai-compatible.js';
import { smartAiSettingsSchema } from '../../../model/recipes/recipe-schema.js';
import type { KnowledgeSearch } from '../runtime/services.js';
import { smartAiBlock } from './smart-ai.js';

/** An engine that records requests and answers from a list (the offline engine is tested elsewhere). */
function recordingEngine(answers: (TurnResult | Error)[]): AgentEngine & { requests: TurnRequest[] } {
  const requests: TurnRequest[] = [];
  return {
    name: 'recording',
    requests,
    async turn(request) {
      requests.push(request);
      const next = answers.shift() ?? { reply: '', values: {} };
      if (next instanceof Error) throw next;
      return next;
    },
  };
}

const reminder = smartAiSettingsSchema.parse({
  prompt: 'You confirm an appointment for {{name}} on {{date}}.\nOpening: Hi {{name}}, can you make it on {{date}}?\nReprompt: Please say yes or no.\nReply confirm: Great, see you then.',
  additionalInstructions: 'Never discuss prices.',
  retryLimit: 2,
  expressiveness: 0.2,
  intents: [
    { name: 'confirm', description: 'caller confirms they will attend' },
    { name: 'reschedule', description: 'caller wants another date' },
  ],
  variables: [{ name: 'new_date', type: 'date', description: 'the new date' }],
  intentVariable: 'reminder_intent',
});

describe('SmartAI block', () => {
  it('opens, detects an intent, passes it into a variable and exits through it (offline engine)', async () => {
    const ctx = fakeContext({ variables: { name: 'Asha', date: 'Monday' }, turns: [say('yes I confirm')] });
    assert.deepEqual(await smartAiBlock.run(ctx, reminder, ctx.signal), { exit: 'confirm' });
    assert.deepEqual(ctx.said.map((s) => s.text), ['Hi Asha, can you make it on Monday?', 'Great, see you then.']);
    assert.equal(ctx.vars.get('reminder_intent'), 'confirm');
  });

  it('extracts variables alongside the intent', async () => {
    const ctx = fakeContext({ variables: { name: 'Asha', date: 'Monday' }, turns: [say('can we reschedule to tomorrow')] });
    assert.deepEqual(await smartAiBlock.run(ctx, reminder, ctx.signal), { exit: 'reschedule' });
    assert.equal(ctx.vars.get('new_date'), '2026-11-22');
  });

  it('leaves through fallback after the retry limit of unmatched turns', async () => {
    const ctx = fakeContext({ variables: { name: 'Asha', date: 'Monday' }, turns: [say('what?'), say('hmm')] });
    assert.deepEqual(await smartAiBlock.run(ctx, reminder, ctx.signal), { exit: 'fallback' });
    assert.deepEqual(ctx.said.map((s) => s.text), ['Hi Asha, can you make it on Monday?', 'Please say yes or no.']);
  });

  it('nudges on silence (counted as a turn) and waits when nudge is off', async () => {
    const nudging = fakeContext({ variables: { name: 'A', date: 'B' }, turns: [silence, say('yes')] });
    assert.deepEqual(await smartAiBlock.run(nudging, reminder, nudging.signal), { exit: 'confirm' });
    assert.equal(nudging.said[1]?.text, 'Please say yes or no.');
    const patient = fakeContext({ variables: { name: 'A', date: 'B' }, turns: [silence, silence, silence, say('yes')] });
    assert.deepEqual(await smartAiBlock.run(patient, { ...reminder, nudge: false }, patient.signal), { exit: 'confirm' });
    assert.equal(patient.said.length, 2);
  });

  it('says the reprompt when the model answered with a tool call but no words', async () => {
    const engine = recordingEngine([{ reply: 'Hello', values: {} }, { reply: '', values: {} }, { reply: '', intent: 'confirm', values: {} }]);
    const ctx = fakeContext({ engine, variables: { name: 'A', date: 'B' }, turns: [say('hmm'), say('yes')] });
    assert.deepEqual(await smartAiBlock.run(ctx, reminder, ctx.signal), { exit: 'confirm' });
    assert.deepEqual(ctx.said.map((s) => s.text), ['Hello', 'Please say yes or no.']);
  });

  it('leaves through fallback when the provider fails', async () => {
    const engine = recordingEngine([{ reply: 'Hello', values: {} }, new ProviderError('HTTP 503', true, 503)]);
    const ctx = fakeContext({ engine, variables: { name: 'A', date: 'B' }, turns: [say('yes')] });
    assert.deepEqual(await smartAiBlock.run(ctx, reminder, ctx.signal), { exit: 'fallback' });
    assert.match(ctx.warnings[0] ?? '', /503/);
  });

  it('builds instructions from prompt, additional instructions, persona and confines, and passes expressiveness', async () => {
    const engine = recordingEngine([{ reply: 'Hi', values: {} }, { reply: '', intent: 'confirm', values: {} }]);
    const ctx = fakeContext({ engine, variables: { name: 'Asha', date: 'Monday' }, global: { persona: 'Warm, Hinglish is fine.', confines: 'Only talk about the appointment.' }, turns: [say('haan')] });
    await smartAiBlock.run(ctx, reminder, ctx.signal);
    const request = engine.requests[1];
    assert.match(request?.instructions ?? '', /for Asha on Monday/);
    assert.match(request?.instructions ?? '', /Never discuss prices/);
    assert.match(request?.instructions ?? '', /Hinglish/);
    assert.match(request?.instructions ?? '', /Only talk about the appointment/);
    assert.equal(request?.expressiveness, 0.2);
    assert.equal(request?.userText, 'haan');
    assert.deepEqual(request?.intents.map((i) => i.name), ['confirm', 'reschedule']);
  });

  it('includes earlier conversation only when conversation history is on', async () => {
    for (const conversationHistory of [true, false]) {
      const engine = recordingEngine([{ reply: 'Hi', values: {} }, { reply: '', intent: 'confirm', values: {} }]);
      const ctx = fakeContext({ engine, variables: { name: 'A', date: 'B' }, turns: [say('yes')] });
      await ctx.say('Earlier block line');
      await smartAiBlock.run(ctx, { ...reminder, conversationHistory }, ctx.signal);
      const history = engine.requests[1]?.history.map((m) => m.content) ?? [];
      assert.equal(history.includes('Earlier block line'), conversationHistory);
      assert.ok(history.includes('Hi'), 'the block always sees its own exchange');
    }
  });

  it('feeds AnswerFlow passages (tag-filtered) to the engine', async () => {
    const searches: { query: string; tags: readonly string[] }[] = [];
    const knowledge: KnowledgeSearch = {
      async search(_tenant, query, tags) {
        searches.push({ query, tags });
        return [{ documentId: 'd1', title: 'Refunds', text: 'Refunds take 5 to 7 working days. They go to the original card.', rank: 1 }];
      },
    };
    const settings = smartAiSettingsSchema.parse({
      prompt: 'Answer support questions.',
      retryLimit: 1,
      answerFlow: { enabled: true, documentTags: ['billing'], formattingInstructions: 'Answer in one sentence.' },
    });
    const ctx = fakeContext({ services: { knowledge }, turns: [say('how long do refunds take')] });
    assert.deepEqual(await smartAiBlock.run(ctx, settings, ctx.signal), { exit: 'fallback' });
    assert.deepEqual(searches, [{ query: 'how long do refunds take', tags: ['billing'] }]);
    // Offline engine: the top passage's first sentences are the answer; retry limit 1 then ends the block.
    const engine = recordingEngine([{ reply: '', values: {} }, { reply: 'ok', values: {} }]);
    const llmCtx = fakeContext({ engine, services: { knowledge }, turns: [say('refund time?')] });
    await smartAiBlock.run(llmCtx, settings, llmCtx.signal);
    assert.deepEqual(engine.requests[1]?.knowledge, ['Refunds take 5 to 7 working days. They go to the original card.']);
    assert.match(engine.requests[1]?.instructions ?? '', /Answer in one sentence/);
  });

  it("listens for questions in the AnswerFlow library's words (tag-filtered), and goes on without them when the library fails", async () => {
    const asked: { tags: readonly string[]; limit: number }[] = [];
    const settings = smartAiSettingsSchema.parse({ prompt: 'Answer support questions.', retryLimit: 1, answerFlow: { enabled: true, documentTags: ['billing'] } });
    const search: KnowledgeSearch['search'] = async () => [];
    const knowledge: KnowledgeSearch = {
      search,
      async vocabulary(_tenant, tags, limit) {
        asked.push({ tags, limit });
        return ['refund', 'card'];
      },
    };
    const ctx = fakeContext({ services: { knowledge }, turns: [say('refund card')] });
    await smartAiBlock.run(ctx, settings, ctx.signal);
    assert.deepEqual(asked, [{ tags: ['billing'], limit: 150 }]);
    assert.deepEqual(ctx.expectations[0]?.words, ['refund', 'card']);
    assert.ok(ctx.expectations[0]?.phrases.some((g) => g.name === 'yes' && g.phrases.includes('haan ji')), 'the answers are still expected, Hindi yes included');
    const hedges = ctx.expectations[0]?.phrases.find((g) => g.name === 'unsure');
    assert.ok(hedges?.phrases.includes("i don't know") && !hedges.neutral, 'hedges are a meaning of their own, not a yes/no');

    const failing = fakeContext({ services: { knowledge: { search, vocabulary: async () => Promise.reject(new Error('db down')) } }, turns: [say('refund')] });
    await smartAiBlock.run(failing, settings, failing.signal);
    assert.equal(failing.expectations[0]?.words, undefined);
    const plain = fakeContext({ services: { knowledge }, turns: [say('yes')] });
    await smartAiBlock.run(plain, smartAiSettingsSchema.parse({ prompt: 'Confirm.', retryLimit: 1 }), plain.signal);
    assert.equal(plain.expectations[0]?.words, undefined, 'no AnswerFlow, no question words');
  });

  it('streams model deltas into speech before the turn completes, except on the last allowed turn', async () => {
    const server = await new FakeChatCompletionsServer().start();
    try {
      server.enqueue(
        { content: 'Hello Asha, can you come on Monday morning?', chunkDelayMs: 40 },
        { content: 'Sorry, I did not get that, could you repeat?', chunkDelayMs: 40, toolCalls: [{ name: 'route_turn', arguments: { intent: 'none' } }] },
        { content: 'This reply must never be heard.', toolCalls: [{ name: 'route_turn', arguments: { intent: 'none' } }] },
      );
      const engine = new LlmEngine(new OpenAiCompatibleProvider({ baseUrl: server.baseUrl, model: 'm' }));
      const ctx = fakeContext({ engine, streaming: true, variables: { name: 'Asha', date: 'Monday' }, turns: [say('hmm'), say('what')] });
      const started = Date.now();
      assert.deepEqual(await smartAiBlock.run(ctx, reminder, ctx.signal), { exit: 'fallback' });
      assert.equal(ctx.streamed.length, 2, 'opening and first reply streamed; the last turn was not');
      assert.ok((ctx.streamed[0]?.pieces.length ?? 0) > 3, 'speech received several pieces');
      assert.ok((ctx.streamed[0]?.firstAt ?? 0) - started < 250, 'speech started with the first delta, not after the whole reply');
      assert.deepEqual(ctx.said.map((s) => s.text), ['Hello Asha, can you come on Monday morning?', 'Sorry, I did not get that, could you repeat?']);
    } finally {
      await server.stop();
    }
  });

  it('stops when the caller hangs up mid-conversation', async () => {
    const ctx = fakeContext({ variables: { name: 'A', date: 'B' }, turns: ['hangup'] });
    await assert.rejects(smartAiBlock.run(ctx, reminder, ctx.signal), /hung up/);
  });
});
