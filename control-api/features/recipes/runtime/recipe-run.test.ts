import assert from 'node:assert/strict';
import { z } from 'zod';
import { silentLogger } from '../../../../core/logger.js';
import { OfflineEngine } from '../../../platform/llm/offline-engine.js';
import { defaultBlocks } from '../blocks/index.js';
import { recipeSchema, type RecipeInput } from '../../../model/recipes/recipe-schema.js';
import type { BlockModule } from './block.js';
import type { BlockRegistry } from './recipe-run.js';
import { RecipeRun } from './recipe-run.js';
import type { SayOptions } from '../../../../core/ports/conversation.js';
import { scriptedTurns, TextConversation, type CallerTurn } from './text-conversation.js';
import type { RuntimeServices } from './services.js';

const services: RuntimeServices = {
  engine: new OfflineEngine(),
  http: { request: async () => ({ status: 200, headers: {}, body: '{}' }) },
  code: { run: async () => ({ ok: false, kind: 'runtime', error: 'unused' }) },
  webhooks: { send: async () => 200 },
  logger: silentLogger,
  silenceTimeoutMs: 100,
};

function start(input: RecipeInput, turns: CallerTurn[] = [], blocks: BlockRegistry = defaultBlocks, maxSteps?: number) {
  const conversation = new TextConversation({ nextTurn: scriptedTurns(turns) });
  const run = new RecipeRun({
    recipe: recipeSchema.parse(input),
    conversation,
    context: { callId: 'c1', tenantId: 't1', timezone: 'UTC', direction: 'simulation', campaignVariables: { name: 'Ravi' }, now: () => Date.UTC(2026, 0, 1) },
    services,
    blocks,
    maxSteps,
  });
  return { run, conversation };
}

const greetAndClose: RecipeInput = {
  name: 'greet',
  startBlockId: 'hello',
  blocks: [
    { id: 'hello', type: 'message', settings: { text: 'Hello {{name}}' } },
    { id: 'bye', type: 'close', settings: { closingScript: 'Bye', disposition: 'done' } },
  ],
  connections: [{ from: 'hello', exit: 'next', to: 'bye' }],
};

describe('RecipeRun', () => {
  it('walks the graph, seeds campaign variables and emits typed events in order', async () => {
    const { run, conversation } = start(greetAndClose);
    const events: string[] = [];
    run.on('blockEntered', (e) => events.push(`enter ${e.blockId}`));
    run.on('blockExited', (e) => events.push(`exit ${e.blockId} ${e.exit ?? e.end}`));
    run.on('utterance', (e) => events.push(`${e.speaker}: ${e.text}`));
    run.on('ended', (e) => events.push(`ended ${e.reason}`));
    const result = await run.run();
    assert.deepEqual(events, ['enter hello', 'agent: Hello Ravi', 'exit hello next', 'enter bye', 'agent: Bye', 'exit bye closed', 'ended closed']);
    assert.equal(result.disposition, 'done');
    assert.deepEqual(result.path, ['hello', 'bye']);
    assert.equal(conversation.hungUp, true);
  });

  it('ends the call when an exit has no connection', async () => {
    const { run } = start({ ...greetAndClose, connections: [] });
    const result = await run.run();
    assert.equal(result.reason, 'exitNotConnected');
    assert.equal(result.lastExit, 'next');
  });

  it('cancels the current block at once on hangup, even one that ignores its signal', async () => {
    let release: () => void = () => {};
    const stubborn: BlockModule<{ text: string }> = {
      type: 'message',
      settings: z.object({ text: z.string() }),
      run: () => new Promise((resolve) => (release = () => resolve({ exit: 'next' }))),
    };
    const { run } = start(greetAndClose, [], { ...defaultBlocks, message: stubborn });
    const ended = run.run();
    setTimeout(() => run.hangup(), 20);
    const started = Date.now();
    const result = await ended;
    release();
    assert.equal(result.reason, 'callerHangup');
    assert.ok(Date.now() - started < 500);
    assert.deepEqual(result.path, ['hello']);
  });

  it('routes a block that throws to its connected failure exit and reports the error', async () => {
    const throwing: BlockModule<{ text: string }> = { type: 'message', settings: z.object({ text: z.string() }), run: async () => { throw new Error('boom'); } };
    const recipe: RecipeInput = {
      name: 'fails',
      startBlockId: 'ask',
      blocks: [
        { id: 'ask', type: 'smartAi', settings: { prompt: 'p' } },
        { id: 'bye', type: 'close', settings: { disposition: 'fallback' } },
      ],
      connections: [{ from: 'ask', exit: 'fallback', to: 'bye' }],
    };
    const explode: BlockModule<never> = throwing as unknown as BlockModule<never>;
    const { run } = start(recipe, [], { ...defaultBlocks, smartAi: explode });
    const errors: string[] = [];
    run.on('error', (e) => errors.push(e.message));
    const result = await run.run();
    assert.deepEqual(errors, ['boom']);
    assert.equal(result.disposition, 'fallback');
  });

  it('ends with an error when a block returns an exit its type does not declare', async () => {
    const confused: BlockModule<{ text: string }> = { type: 'message', settings: z.object({ text: z.string() }), run: async () => ({ exit: 'sideways' }) };
    const { run } = start(greetAndClose, [], { ...defaultBlocks, message: confused });
    const errors: string[] = [];
    run.on('error', (e) => errors.push(e.message));
    const result = await run.run();
    assert.equal(result.reason, 'error');
    assert.match(errors[0] ?? '', /unknown exit 'sideways'; its exits are next/);
  });

  it('stops a graph that loops without waiting for the caller', async () => {
    const { run } = start(
      {
      name: 'loop',
      startBlockId: 'a',
      blocks: [
        { id: 'a', type: 'message', settings: { text: 'a' } },
        { id: 'b', type: 'message', settings: { text: 'b' } },
      ],
      connections: [
        { from: 'a', exit: 'next', to: 'b' },
        { from: 'b', exit: 'next', to: 'a' },
      ],
      },
      [],
      defaultBlocks,
      10,
    );
    const result = await run.run();
    assert.equal(result.reason, 'stepLimit');
    assert.equal(result.path.length, 10);
  });

  it('records the transcript with caller turns and a caller hangup', async () => {
    const { run } = start(
      {
        name: 'ask',
        startBlockId: 'q',
        blocks: [
          { id: 'q', type: 'ask', settings: { prompt: 'Opening: Your city?', variables: [{ name: 'city', type: 'text' }] } },
          { id: 'bye', type: 'close', settings: { closingScript: 'Thanks {{city}}' } },
          { id: 'fb', type: 'close', settings: {} },
        ],
        connections: [
          { from: 'q', exit: 'next', to: 'bye' },
          { from: 'q', exit: 'fallback', to: 'fb' },
        ],
      },
      [{ kind: 'utterance', text: 'Pune' }],
    );
    const result = await run.run();
    assert.deepEqual(result.transcript.map((t) => `${t.speaker}:${t.text}`), ['agent:Your city?', 'caller:Pune', 'agent:Thanks Pune']);
    assert.equal(result.variables.city, 'Pune');
    const { run: hungUp } = start(
      {
        name: 'x',
        startBlockId: 'q',
        blocks: [
          { id: 'q', type: 'ask', settings: { prompt: 'p', variables: [{ name: 'city', type: 'text' }] } },
          { id: 'fb', type: 'close', settings: {} },
        ],
        connections: [{ from: 'q', exit: 'fallback', to: 'fb' }],
      },
      [{ kind: 'hangup' }],
    );
    assert.equal((await hungUp.run()).reason, 'callerHangup');
  });

  describe('speaking like a person', () => {
    /** The example reminder's end: a date asked for, a closing line that names it. */
    const reschedule: RecipeInput = {
      name: 'reschedule',
      startBlockId: 'order',
      blocks: [
        { id: 'order', type: 'ask', settings: { prompt: 'Ask for the order number.', variables: [{ name: 'order_number', type: 'digits', description: 'The order number' }] } },
        { id: 'ask_date', type: 'ask', settings: { prompt: 'Opening: Which day would suit you?', variables: [{ name: 'new_date', type: 'date', description: 'the new date' }] } },
        { id: 'done', type: 'close', settings: { closingScript: 'Done, order {{order_number}} moved to {{new_date}}. Goodbye!', disposition: 'rescheduled' } },
      ],
      connections: [
        { from: 'order', exit: 'next', to: 'ask_date' },
        { from: 'ask_date', exit: 'next', to: 'done' },
      ],
    };

    /** A text conversation whose caller cuts short the lines containing `interrupt`, and that keeps every SayOptions. */
    function speaking(turns: CallerTurn[], interrupt?: string) {
      const options: SayOptions[] = [];
      const conversation = new TextConversation({ nextTurn: scriptedTurns(turns) });
      const say = conversation.say.bind(conversation);
      conversation.say = async (text, sayOptions) => {
        options.push(sayOptions);
        const result = await say(text, sayOptions);
        return interrupt && text.includes(interrupt) ? { interrupted: true, unspoken: text } : result;
      };
      const run = new RecipeRun({
        recipe: recipeSchema.parse(reschedule),
        conversation,
        context: { callId: 'c1', tenantId: 't1', timezone: 'UTC', direction: 'simulation', campaignVariables: {}, now: () => Date.UTC(2026, 10, 21) },
        services,
        blocks: defaultBlocks,
      });
      return { run, conversation, options };
    }

    it('a digit variable is read one digit at a time wherever it is said (123456 is no amount)', async () => {
      const { run, conversation, options } = speaking([{ kind: 'dtmf', digits: '123456' }, { kind: 'utterance', text: 'the third of december' }]);
      const result = await run.run();
      assert.equal(result.disposition, 'rescheduled');
      assert.equal(conversation.agentLines.at(-1), 'Done, order 123456 moved to 2026-12-03. Goodbye!');
      assert.deepEqual(options.at(-1)?.spellOut, ['123456']);
      assert.equal(options[0]?.spellOut, undefined);
    });

    it('a date said over the closing line is heard and acted on: the run goes back to the block that asked', async () => {
      const { run, conversation, options } = speaking(
        [{ kind: 'dtmf', digits: '123456' }, { kind: 'utterance', text: 'the third of december' }, { kind: 'utterance', text: 'no wait, the fifth of december' }, { kind: 'silence' }],
        'moved to 2026-12-03',
      );
      const result = await run.run();
      assert.deepEqual(result.path, ['order', 'ask_date', 'done', 'ask_date', 'done']);
      assert.deepEqual(result.steps[2]?.turns.map((t) => t.kind), ['saidOver']);
      assert.equal(result.disposition, 'rescheduled');
      assert.equal(result.variables.new_date, '2026-12-05');
      // The words are in the transcript under the block they were said over, and the block did not ask again first.
      assert.ok(result.transcript.some((t) => t.speaker === 'caller' && t.text === 'no wait, the fifth of december' && t.blockId === 'done'));
      assert.equal(conversation.agentLines.filter((l) => l === 'Which day would suit you?').length, 1);
      assert.equal(conversation.agentLines.at(-1), 'Done, order 123456 moved to 2026-12-05. Goodbye!');
      // Once only: the closing line after going back is said whole.
      assert.deepEqual(options.filter((o, i) => conversation.agentLines[i]?.startsWith('Done')).map((o) => o.bargeIn), [true, false]);
    });

    it('words over the closing line that change nothing get the rest of the line, not the whole line again', async () => {
      const { run, conversation, options } = speaking(
        [{ kind: 'dtmf', digits: '123456' }, { kind: 'utterance', text: 'the third of december' }, { kind: 'utterance', text: 'yes the third of december' }, { kind: 'silence' }],
        'moved to 2026-12-03',
      );
      // Cut short after "moved to 2026-12-03.": the rest is "Goodbye!".
      const say = conversation.say.bind(conversation);
      conversation.say = async (text, sayOptions) => {
        const result = await say(text, sayOptions);
        return result.interrupted ? { interrupted: true, unspoken: 'Goodbye!' } : result;
      };
      const result = await run.run();
      assert.deepEqual(result.path, ['order', 'ask_date', 'done', 'ask_date', 'done']);
      assert.equal(result.reason, 'closed');
      assert.equal(result.disposition, 'rescheduled');
      assert.equal(result.variables.new_date, '2026-12-03');
      assert.deepEqual(conversation.agentLines.slice(-2), ['Done, order 123456 moved to 2026-12-03. Goodbye!', 'Goodbye!']);
      assert.equal(options.at(-1)?.bargeIn, false);
    });

    it('with no block that listened before it, the closing line is said whole', async () => {
      const { run, conversation } = start(greetAndClose);
      const said: boolean[] = [];
      const say = conversation.say.bind(conversation);
      conversation.say = async (text, sayOptions) => (said.push(sayOptions.bargeIn), say(text, sayOptions));
      await run.run();
      assert.deepEqual(said, [false, false]);
    });
  });
});

