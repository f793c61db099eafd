import assert from 'node:assert/strict';
import { fakeContext, press, say, silence } from '../../../../test/fakes/fake-block-context.js';
import { askSettingsSchema } from '../../../model/recipes/recipe-schema.js';
import { askBlock } from './ask.js';

describe('Ask block', () => {
  const settings = askSettingsSchema.parse({
    prompt: 'Ask how much the caller can pay today.\nOpening: How much can you pay today?\nReprompt: Please tell me an amount in rupees.',
    retryLimit: 3,
    intents: [{ name: 'dispute', description: 'caller disputes the loan or says it is wrong' }],
    variables: [{ name: 'amount', type: 'number', description: 'amount the caller can pay' }],
  });

  it('captures one value and leaves through next', async () => {
    const ctx = fakeContext({ turns: [say('I can pay two thousand five hundred')] });
    assert.deepEqual(await askBlock.run(ctx, settings, ctx.signal), { exit: 'next' });
    assert.equal(ctx.vars.get('amount'), 2500);
    // An amount can be keyed in: the question says so.
    assert.deepEqual(ctx.said.map((s) => s.text), ['How much can you pay today? You can also key it in, then press hash.']);
  });

  it('tells the recogniser how many digits a digit string of a known length has', async () => {
    const order = askSettingsSchema.parse({ prompt: 'Opening: Could you tell me the order number?', variables: [{ name: 'order_number', type: 'digits', length: 6 }] });
    const ctx = fakeContext({ turns: [say('one two three four five six')] });
    await askBlock.run(ctx, order, ctx.signal);
    assert.equal(ctx.expectations[0]?.digitCount, 6);
    assert.deepEqual(ctx.expectations[0]?.values, ['digits']);
    const anyLength = fakeContext({ turns: [say('one two three')] });
    await askBlock.run(anyLength, askSettingsSchema.parse({ prompt: 'Opening: Your number?', variables: [{ name: 'id', type: 'digits' }] }), anyLength.signal);
    assert.equal(anyLength.expectations[0]?.digitCount, undefined);
  });

  it('a digit string of a known length: the keypad entry ends at its last digit, another length is asked again', async () => {
    const order = askSettingsSchema.parse({ prompt: 'Opening: Could you tell me the order number?', variables: [{ name: 'order_number', type: 'digits', length: 6 }] });
    // Five keyed, then six: the five are no order number, the six are (no hash needed).
    const ctx = fakeContext({ turns: [press('12345'), press('012345')] });
    assert.deepEqual(await askBlock.run(ctx, order, ctx.signal), { exit: 'next' });
    assert.equal(ctx.vars.get('order_number'), '012345');
    assert.equal(ctx.expectations[0]?.dtmf?.maxDigits, 6);
    assert.equal(ctx.said[0]?.text, 'Could you tell me the order number? You can also key in the 6 digits.');
    // Said with seven digits, it is not stored either.
    const said = fakeContext({ turns: [say('one two three four five six seven'), silence, silence, silence] });
    assert.deepEqual(await askBlock.run(said, order, said.signal), { exit: 'fallback' });
    assert.equal(said.vars.get('order_number'), undefined);
    // An amount beside it needs the terminator: its entries end at hash, as before.
    const withAmount = askSettingsSchema.parse({ ...order, variables: [...order.variables, { name: 'amount', type: 'number' }] });
    const both = fakeContext({ turns: [press('15000')] });
    // (The caller then hangs up before giving the order number.)
    await assert.rejects(askBlock.run(both, withAmount, both.signal), /hung up/);
    assert.equal(both.expectations[0]?.dtmf?.maxDigits, 32);
    assert.match(both.said[0]?.text ?? '', /then press hash\.$/);
    // A block whose entries end before the length could never be keyed: refused.
    assert.throws(() => askSettingsSchema.parse({ ...order, dtmf: { maxDigits: 4 } }), /dtmf.maxDigits \(4\) must be at least the length of 'order_number' \(6\)/);
  });

  it('accepts DTMF digits as the answer', async () => {
    const ctx = fakeContext({ turns: [press('1500')] });
    assert.deepEqual(await askBlock.run(ctx, settings, ctx.signal), { exit: 'next' });
    assert.equal(ctx.vars.get('amount'), 1500);
  });

  it('reprompts, then falls back after the retry limit', async () => {
    const ctx = fakeContext({ turns: [say('not sure'), say('maybe'), say('hmm')] });
    assert.deepEqual(await askBlock.run(ctx, settings, ctx.signal), { exit: 'fallback' });
    assert.equal(ctx.said.filter((s) => s.text.startsWith('Please tell me')).length, 2);
  });

  it('lets an intent steer away before the value is captured', async () => {
    const ctx = fakeContext({ turns: [say('this loan is wrong, I dispute it')] });
    assert.deepEqual(await askBlock.run(ctx, settings, ctx.signal), { exit: 'dispute' });
  });

  it('does not count a value set before the block as captured', async () => {
    const ctx = fakeContext({ variables: { amount: 999 }, turns: [say('umm'), say('3000')] });
    assert.deepEqual(await askBlock.run(ctx, settings, ctx.signal), { exit: 'next' });
    assert.equal(ctx.vars.get('amount'), 3000);
  });
});
