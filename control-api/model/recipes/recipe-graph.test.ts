import assert from 'node:assert/strict';
import { exitsOf, validRecipeSchema, validateRecipeGraph } from './recipe-graph.js';
import { recipeSchema, type Recipe, type RecipeInput } from './recipe-schema.js';

/** Structural rules (spec: Message, SmartAI Fallback Node, Code If Fails, Condition Else). */

const parse = (input: RecipeInput): Recipe => recipeSchema.parse(input);
const errors = (input: RecipeInput) =>
  validateRecipeGraph(parse(input))
    .filter((i) => i.severity === 'error')
    .map((i) => `${i.path}: ${i.message}`);
const warnings = (input: RecipeInput) =>
  validateRecipeGraph(parse(input))
    .filter((i) => i.severity === 'warning')
    .map((i) => `${i.path}: ${i.message}`);

const close = { id: 'bye', type: 'close' as const, settings: {} };
const smartAi = { id: 'talk', type: 'smartAi' as const, settings: { prompt: 'Sell plants', intents: [{ name: 'buy', description: 'wants to buy' }] } };
const code = { id: 'calc', type: 'code' as const, settings: { source: 'function main(context, variables, plugins) { variables.total = 1; }' } };
const condition = {
  id: 'route',
  type: 'condition' as const,
  settings: { branches: [{ name: 'vip', rules: [{ variable: 'tier', operator: 'equals' as const, value: 'gold' }] }] },
};
const message = (id: string) => ({ id, type: 'message' as const, settings: { text: `hello from ${id}` } });

describe('recipe graph', () => {
  it('accepts a complete graph without errors or warnings', () => {
    const recipe: RecipeInput = {
      name: 'Complete',
      startBlockId: 'hi',
      blocks: [message('hi'), smartAi, code, condition, close],
      connections: [
        { from: 'hi', exit: 'next', to: 'talk' },
        { from: 'talk', exit: 'buy', to: 'calc' },
        { from: 'talk', exit: 'fallback', to: 'bye' },
        { from: 'calc', exit: 'ifSuccess', to: 'route' },
        { from: 'calc', exit: 'ifFails', to: 'bye' },
        { from: 'route', exit: 'vip', to: 'bye' },
        { from: 'route', exit: 'else', to: 'bye' },
      ],
    };
    assert.deepEqual(validateRecipeGraph(parse(recipe)), []);
    assert.equal(validRecipeSchema.safeParse(recipe).success, true);
  });

  describe('Message has exactly one outgoing connection', () => {
    it('rejects none', () => {
      assert.deepEqual(errors({ name: 'r', startBlockId: 'hi', blocks: [message('hi')] }), [
        "blocks.0: Message block 'hi' must have exactly one outgoing connection (has 0)",
      ]);
    });
    it('rejects a second connection from the same exit', () => {
      assert.deepEqual(
        errors({
          name: 'r',
          startBlockId: 'hi',
          blocks: [message('hi'), close, { ...close, id: 'bye2' }],
          connections: [
            { from: 'hi', exit: 'next', to: 'bye' },
            { from: 'hi', exit: 'next', to: 'bye2' },
          ],
        }),
        ["connections.1: exit 'next' of block 'hi' is connected twice (connections 0 and 1); an exit leads to one block"],
      );
    });
  });

  describe('SmartAI and Ask must connect their Fallback Node', () => {
    it('rejects a SmartAI without fallback', () => {
      assert.deepEqual(
        errors({ name: 'r', startBlockId: 'talk', blocks: [smartAi, close], connections: [{ from: 'talk', exit: 'buy', to: 'bye' }] }),
        ["blocks.0: SmartAI block 'talk' must connect its Fallback Node exit ('fallback')"],
      );
    });
    it('rejects an Ask without fallback', () => {
      const ask = { id: 'ask', type: 'ask' as const, settings: { prompt: 'Ask the pincode', variables: [{ name: 'pincode', type: 'number' as const }] } };
      assert.deepEqual(errors({ name: 'r', startBlockId: 'ask', blocks: [ask, close], connections: [{ from: 'ask', exit: 'next', to: 'bye' }] }), [
        "blocks.0: Ask block 'ask' must connect its Fallback Node exit ('fallback')",
      ]);
    });
  });

  describe('Code must connect If Fails', () => {
    it('rejects a Code block without ifFails', () => {
      assert.deepEqual(errors({ name: 'r', startBlockId: 'calc', blocks: [code, close], connections: [{ from: 'calc', exit: 'ifSuccess', to: 'bye' }] }), [
        "blocks.0: Code block 'calc' must connect its If Fails exit ('ifFails')",
      ]);
    });
    it('accepts a Code block whose If Success is left unconnected (the spec requires only If Fails)', () => {
      assert.deepEqual(errors({ name: 'r', startBlockId: 'calc', blocks: [code, close], connections: [{ from: 'calc', exit: 'ifFails', to: 'bye' }] }), []);
    });
  });

  describe('Condition has an Else path', () => {
    it('rejects a Condition without else', () => {
      assert.deepEqual(
        errors({ name: 'r', startBlockId: 'route', blocks: [condition, close], connections: [{ from: 'route', exit: 'vip', to: 'bye' }] }),
        ["blocks.0: Condition block 'route' must connect its Else exit ('else')"],
      );
    });
  });

  describe('no dangling connections', () => {
    it('rejects unknown source and target blocks and unknown exits', () => {
      assert.deepEqual(
        errors({
          name: 'r',
          startBlockId: 'hi',
          blocks: [message('hi'), close],
          connections: [
            { from: 'hi', exit: 'next', to: 'bye' },
            { from: 'ghost', exit: 'next', to: 'bye' },
            { from: 'bye', exit: 'next', to: 'nowhere' },
            { from: 'hi', exit: 'nope', to: 'bye' },
          ],
        }),
        [
          "connections.1.from: connection 1 starts at block 'ghost', which does not exist",
          "connections.2.to: connection 2 leads to block 'nowhere', which does not exist",
          "connections.2.exit: Close block 'bye' has no exit 'next'; its exits are: none (a Close block has no exits)",
          "connections.3.exit: Message block 'hi' has no exit 'nope'; its exits are: next",
        ],
      );
    });

    it('rejects a missing start block', () => {
      assert.deepEqual(errors({ name: 'r', startBlockId: 'start', blocks: [close] }), ["startBlockId: start block 'start' does not exist"]);
    });
  });

  describe('no endless loops', () => {
    it('rejects a cycle of Message / Webhook blocks, which would never wait for the caller', () => {
      assert.deepEqual(
        errors({
          name: 'r',
          startBlockId: 'a',
          blocks: [message('a'), message('b'), { id: 'hook', type: 'webhook', settings: { url: 'http://127.0.0.1:9/h' } }],
          connections: [
            { from: 'a', exit: 'next', to: 'b' },
            { from: 'b', exit: 'next', to: 'hook' },
            { from: 'hook', exit: 'next', to: 'b' },
          ],
        }),
        ["blocks.1: blocks 'b' -> 'hook' -> 'b' loop forever without waiting for the caller"],
      );
    });

    it('accepts a loop through a SmartAI block (it waits for the caller)', () => {
      assert.deepEqual(
        errors({
          name: 'r',
          startBlockId: 'hi',
          blocks: [message('hi'), smartAi, close],
          connections: [
            { from: 'hi', exit: 'next', to: 'talk' },
            { from: 'talk', exit: 'buy', to: 'hi' },
            { from: 'talk', exit: 'fallback', to: 'bye' },
          ],
        }),
        [],
      );
    });
  });

  describe('warnings', () => {
    it('reports unreachable blocks and open optional exits without rejecting', () => {
      const recipe: RecipeInput = {
        name: 'r',
        startBlockId: 'hi',
        blocks: [message('hi'), close, message('orphan'), { id: 'crm', type: 'api', settings: { method: 'GET', url: 'http://127.0.0.1:9/x' } }],
        connections: [
          { from: 'hi', exit: 'next', to: 'bye' },
          { from: 'orphan', exit: 'next', to: 'crm' },
        ],
      };
      assert.deepEqual(warnings(recipe), [
        "blocks.3: exit 'success' of API block 'crm' is not connected; taking it ends the call",
        "blocks.3: exit 'failure' of API block 'crm' is not connected; taking it ends the call",
        "blocks.2: block 'orphan' cannot be reached from the start block 'hi'",
        "blocks.3: block 'crm' cannot be reached from the start block 'hi'",
      ]);
      assert.equal(validRecipeSchema.safeParse(recipe).success, true);
    });
  });

  it('validRecipeSchema reports graph errors as zod issues with paths', () => {
    const result = validRecipeSchema.safeParse({ name: 'r', startBlockId: 'calc', blocks: [code, close], connections: [{ from: 'calc', exit: 'ifSuccess', to: 'bye' }] });
    assert.equal(result.success, false);
    assert.deepEqual(result.error?.issues.map((i) => [i.path, i.message]), [[['blocks', 0], "Code block 'calc' must connect its If Fails exit ('ifFails')"]]);
  });

  describe('exitsOf', () => {
    it('names the exits the runtime routes on, per block type', () => {
      const r = parse({
        name: 'r',
        startBlockId: 'hi',
        blocks: [
          message('hi'),
          smartAi,
          { id: 'ask', type: 'ask', settings: { prompt: 'p', variables: [{ name: 'city', type: 'text' }], intents: [{ name: 'agent', description: 'wants a human' }] } },
          condition,
          code,
          { id: 'crm', type: 'api', settings: { method: 'POST', url: 'http://127.0.0.1:9/x' } },
          { id: 'hook', type: 'webhook', settings: { url: 'http://127.0.0.1:9/hook' } },
          { id: 'xfer', type: 'transfer', settings: { target: 'sip:agent@127.0.0.1' } },
          close,
        ],
      });
      assert.deepEqual(r.blocks.map((b) => [b.type, exitsOf(b)]), [
        ['message', ['next']],
        ['smartAi', ['buy', 'fallback']],
        ['ask', ['next', 'agent', 'fallback']],
        ['condition', ['vip', 'else']],
        ['code', ['ifSuccess', 'ifFails']],
        ['api', ['success', 'failure']],
        ['webhook', ['next']],
        ['transfer', ['failed']],
        ['close', []],
      ]);
    });
  });
});
