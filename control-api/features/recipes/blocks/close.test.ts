import assert from 'node:assert/strict';
import { fakeContext, say, silence } from '../../../../test/fakes/fake-block-context.js';
import { closeSettingsSchema } from '../../../model/recipes/recipe-schema.js';
import { closeBlock } from './close.js';

describe('Close block', () => {
  const settings = closeSettingsSchema.parse({ closingScript: 'Take care, goodbye.', disposition: 'cancelled' });

  it('speaks the closing script (the caller may cut it short) and ends with the disposition tag', async () => {
    const ctx = fakeContext({ variables: { outcome: 'paid' } });
    const outcome = await closeBlock.run(ctx, closeSettingsSchema.parse({ closingScript: 'Thank you, goodbye.', disposition: 'loan-{{outcome}}' }), ctx.signal);
    assert.deepEqual(outcome, { end: 'closed', disposition: 'loan-paid' });
    assert.deepEqual(ctx.said, [{ text: 'Thank you, goodbye.', bargeIn: true }]);
  });

  it('ends silently when there is no closing script', async () => {
    const ctx = fakeContext();
    assert.deepEqual(await closeBlock.run(ctx, closeSettingsSchema.parse({}), ctx.signal), { end: 'closed', disposition: '' });
    assert.equal(ctx.said.length, 0);
  });

  it('words said over the closing line are handed back to the run, not lost', async () => {
    const date = say('no wait, the fifth of december');
    const ctx = fakeContext({ interrupts: ['Take care'], turns: [date, silence] });
    // With the rest of the line, for the run to say if the words change nothing.
    assert.deepEqual(await closeBlock.run(ctx, settings, ctx.signal), { end: 'closed', disposition: 'cancelled', saidOver: date, unspoken: 'Take care, goodbye.' });
    // A barge-in turn ends at the first short pause: the pieces that follow at once are one answer.
    const pieces = fakeContext({
      interrupts: ['Take care'],
      turns: [{ kind: 'utterance', text: 'nope that', confidence: 0.8, meaning: 'no' }, { kind: 'utterance', text: 'fifth of december', confidence: 0.9, meaning: '' }, silence],
    });
    const outcome = await closeBlock.run(pieces, settings, pieces.signal);
    assert.deepEqual('saidOver' in outcome ? outcome.saidOver : undefined, { kind: 'utterance', text: 'nope that fifth of december', confidence: 0.8, meaning: 'no' });
  });

  it('a goodbye of the caller\'s own over it ends the call; a cough gets the rest of the line', async () => {
    const bye = fakeContext({ interrupts: ['Take care'], turns: [say('okay thanks bye'), silence] });
    assert.deepEqual(await closeBlock.run(bye, settings, bye.signal), { end: 'closed', disposition: 'cancelled' });
    assert.equal(bye.said.length, 1);
    const cough = fakeContext({ interrupts: ['Take care'], turns: [silence] });
    assert.deepEqual(await closeBlock.run(cough, settings, cough.signal), { end: 'closed', disposition: 'cancelled' });
    // The unspoken rest of the line is said again, and this time it cannot be cut short.
    assert.deepEqual(cough.said.map((s) => s.bargeIn), [true, false]);
  });
});
