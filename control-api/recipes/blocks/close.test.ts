import assert from 'node:assert/strict';
import { fakeContext } from '../../../test/fakes/fake-block-context.js';
import { closeSettingsSchema } from '../recipe-schema.js';
import { closeBlock } from './close.js';

describe('Close block', () => {
  it('speaks the closing script uninterruptibly and ends with the disposition tag', async () => {
    const ctx = fakeContext({ variables: { outcome: 'paid' } });
    const outcome = await closeBlock.run(ctx, closeSettingsSchema.parse({ closingScript: 'Thank you, goodbye.', disposition: 'loan-{{outcome}}' }), ctx.signal);
    assert.deepEqual(outcome, { end: 'closed', disposition: 'loan-paid' });
    assert.deepEqual(ctx.said, [{ text: 'Thank you, goodbye.', bargeIn: false }]);
  });

  it('ends silently when there is no closing script', async () => {
    const ctx = fakeContext();
    assert.deepEqual(await closeBlock.run(ctx, closeSettingsSchema.parse({}), ctx.signal), { end: 'closed', disposition: '' });
    assert.equal(ctx.said.length, 0);
  });
});
