import assert from 'node:assert/strict';
import { exitsOf as serverExitsOf } from '../../control-api/model/recipes/recipe-graph.js';
import { recipeSchema, type Block } from '../../control-api/model/recipes/recipe-schema.js';
import { blockTypes, defaultSettings, exitsOf, retyped, starterRecipe } from '../../web/src/recipe/model.js';

/**
 * The dashboard draws exits and offers new blocks without asking the server, so its model must
 * agree with the runtime's: the same exits per block, and defaults the API accepts.
 */
describe('dashboard recipe model agrees with the recipe runtime', () => {
  it('offers every block type with settings the API accepts, and the starter recipe is valid', () => {
    for (const [type] of blockTypes) {
      const spec = { ...starterRecipe('check'), blocks: [...starterRecipe('check').blocks, { id: 'x', type, settings: defaultSettings(type) }] };
      const parsed = recipeSchema.safeParse(spec);
      assert.ok(parsed.success || parsed.error.issues.every((i) => !String(i.path.join('.')).startsWith('blocks.2.settings')), `${type}: ${JSON.stringify(parsed.error?.issues)}`);
    }
    assert.ok(recipeSchema.safeParse(starterRecipe('check')).success);
  });

  it("drops a digit string's length when its variable takes another type (the API refuses it there)", () => {
    const order = { name: 'order_number', type: 'digits', length: 6, description: 'the order' };
    assert.deepEqual(retyped(order, 'text'), { name: 'order_number', type: 'text', description: 'the order' });
    assert.deepEqual(retyped(order, 'digits'), order);
  });

  it('names the same exits as control-api/model/recipes/recipe-graph.ts for every block type', () => {
    const withBranches: Record<string, Record<string, unknown>> = {
      smartAi: { prompt: 'p', intents: [{ name: 'pay', description: 'd' }, { name: 'later', description: 'd' }] },
      ask: { prompt: 'p', intents: [{ name: 'human', description: 'd' }], variables: [{ name: 'v', type: 'text' }] },
      condition: { branches: [{ name: 'a', rules: [{ variable: 'x', operator: 'isEmpty' }] }, { name: 'b', rules: [{ variable: 'y', operator: 'isNotEmpty' }] }] },
    };
    for (const [type] of blockTypes) {
      const settings = withBranches[type] ?? defaultSettings(type);
      const recipe = recipeSchema.parse({ name: 'r', startBlockId: 'x', blocks: [{ id: 'x', type, settings }], connections: [] });
      const block = recipe.blocks[0] as Block;
      assert.deepEqual(exitsOf(type, settings), [...serverExitsOf(block)], type);
    }
  });
});
