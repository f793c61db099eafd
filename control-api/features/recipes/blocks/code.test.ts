import assert from 'node:assert/strict';
import { fakeContext } from '../../../../test/fakes/fake-block-context.js';
import { QuickJsCodeRunner } from '../code-sandbox/quickjs-code-runner.js';
import { codeSettingsSchema } from '../../../model/recipes/recipe-schema.js';
import { codeBlock } from './code.js';

describe('Code block', () => {
  let code: QuickJsCodeRunner;
  before(() => {
    code = new QuickJsCodeRunner({ workers: 1 });
  });
  after(() => code.close());

  it('writes back changed variables and leaves through ifSuccess', async () => {
    const ctx = fakeContext({ variables: { balance: 12000, paid: 2000 }, services: { code } });
    const settings = codeSettingsSchema.parse({
      source: 'function main(context, variables, plugins) { variables.remaining = variables.balance - variables.paid; variables.caller = context.callerNumber; }',
    });
    assert.deepEqual(await codeBlock.run(ctx, settings, ctx.signal), { exit: 'ifSuccess' });
    assert.equal(ctx.vars.get('remaining'), 10000);
    assert.equal(ctx.vars.get('caller'), '+919812345678');
  });

  it("gives the code the run's clock: plugins.date.today() is the caller's local date, Date.now() the run's now", async () => {
    // 20:00 UTC on 2030-03-01 is already 2 March in Asia/Kolkata (the fake call's timezone).
    const now = Date.UTC(2030, 2, 1, 20, 0);
    const ctx = fakeContext({ services: { code }, now });
    const settings = codeSettingsSchema.parse({ source: 'function main(c, v, plugins) { v.today = plugins.date.today(); v.now = Date.now(); }' });
    assert.deepEqual(await codeBlock.run(ctx, settings, ctx.signal), { exit: 'ifSuccess' });
    assert.equal(ctx.vars.get('today'), '2030-03-02');
    assert.equal(ctx.vars.get('now'), now);
  });

  it('routes a syntax error, a runtime error and a timeout to ifFails', async () => {
    for (const source of ['function main( {', 'function main() { null.x }', 'function main() { while (true) {} }']) {
      const ctx = fakeContext({ services: { code } });
      assert.deepEqual(await codeBlock.run(ctx, codeSettingsSchema.parse({ source, timeoutMs: 200 }), ctx.signal), { exit: 'ifFails' }, source);
      assert.equal(ctx.warnings.length, 1);
    }
  });
});
