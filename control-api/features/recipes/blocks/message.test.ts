import assert from 'node:assert/strict';
import { fakeContext } from '../../../../test/fakes/fake-block-context.js';
import { messageSettingsSchema } from '../../../model/recipes/recipe-schema.js';
import { messageBlock } from './message.js';

describe('Message block', () => {
  it('speaks templated text without waiting and continues through next', async () => {
    const ctx = fakeContext({ variables: { name: 'Asha' } });
    const outcome = await messageBlock.run(ctx, messageSettingsSchema.parse({ text: 'Hello {{name}}, it is {{current_time}} ({{current_day}}).' }), ctx.signal);
    assert.deepEqual(outcome, { exit: 'next' });
    assert.deepEqual(ctx.said, [{ text: 'Hello Asha, it is 12:00 (Saturday).', bargeIn: false }]);
    assert.equal(ctx.heard.length, 0);
  });

  it('renders a missing variable as empty, leaves no stray space before punctuation, and reports it instead of failing', async () => {
    const ctx = fakeContext();
    await messageBlock.run(ctx, { text: 'Dear {{first_name}}, hello.' }, ctx.signal);
    assert.equal(ctx.said[0]?.text, 'Dear, hello.');
    assert.deepEqual(ctx.warnings, ["template variable 'first_name' is not set"]);
  });
});
