import assert from 'node:assert/strict';
import { fakeContext } from '../../../test/fakes/fake-block-context.js';
import { QuickJsCodeRunner } from '../code-sandbox/quickjs-code-runner.js';
import { codeSettingsSchema } from '../recipe-schema.js';
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

  it('routes a syntax error, a runtime error and a timeout to ifFails', async () => {
    for (const source of ['function main( {', 'function main() { null.x }', 'function main() { while (true) {} }']) {
      const ctx = fakeContext({ services: { code } });
      assert.deepEqual(await codeBlock.run(ctx, codeSettingsSchema.parse({ source, timeoutMs: 200 }), ctx.signal), { exit: 'ifFails' }, source);
      assert.equal(ctx.warnings.length, 1);
    }
  });
});
