import assert from 'node:assert/strict';
import { fakeContext } from '../../../../test/fakes/fake-block-context.js';
import { transferSettingsSchema } from '../../../model/recipes/recipe-schema.js';
import { transferBlock } from './transfer.js';

describe('Transfer block', () => {
  const settings = transferSettingsSchema.parse({ target: 'sip:agents@pbx.example.com', bridgeMessage: 'Connecting you to {{team}} now.' });

  it('speaks the bridge message, then hands the call to the target', async () => {
    const ctx = fakeContext({ variables: { team: 'billing' } });
    assert.deepEqual(await transferBlock.run(ctx, settings, ctx.signal), { end: 'transferred', target: 'sip:agents@pbx.example.com' });
    assert.deepEqual(ctx.said, [{ text: 'Connecting you to billing now.', bargeIn: false }]);
    assert.deepEqual(ctx.transfers, [{ target: 'sip:agents@pbx.example.com', bridgeMessage: 'Connecting you to billing now.' }]);
  });

  it('leaves through failed when the target is busy or unreachable', async () => {
    const ctx = fakeContext({ variables: { team: 'billing' }, transfer: { ok: false, reason: '486 Busy Here' } });
    assert.deepEqual(await transferBlock.run(ctx, transferSettingsSchema.parse({ target: '+14155550100' }), ctx.signal), { exit: 'failed' });
    assert.match(ctx.warnings[0] ?? '', /486 Busy Here/);
  });
});
