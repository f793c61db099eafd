import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FakeChatCompletionsServer } from '../../test/fakes/fake-chat-completions.js';
import { offlineBrain } from '../../test/fakes/offline-brain.js';
import { runSimulateCommand } from './simulate.js';

const examples = path.resolve('examples/recipes');
const recipes = path.resolve('examples/tenant');

async function run(args: string[], input: string[] = [], env: Record<string, string> = {}) {
  let stdout = '';
  let stderr = '';
  const lines = (async function* () {
    yield* input;
  })();
  const code = await runSimulateCommand(args, { lines, stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), env });
  return { code, stdout, stderr };
}

describe('simulate CLI command', function () {
  this.timeout(60_000);
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'vap-simulate-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('chats with a recipe: agent lines out, caller lines in, summary at the end', async () => {
    const result = await run([path.join(recipes, '41-appointment-reminder.recipe.yaml'), '--vars', 'patient_name=Asha', '--vars', 'doctor=Dr. Rao'], ['can we reschedule to tomorrow']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /agent> Hello Asha, this is calling about your appointment with Dr\. Rao/);
    assert.match(result.stdout, /-- call ended: closed, disposition rescheduled/);
    assert.match(result.stdout, /"new_date":"\d{4}-\d{2}-\d{2}"/);
    assert.match(result.stderr, /\[webhook https:\/\/clinic\.example\.com\/hooks\/reschedule/);
    assert.match(result.stderr, /template variable 'clinic_name' is not set/);
  });

  it('treats end of input as the caller hanging up, and understands /dtmf and /silence', async () => {
    const result = await run([path.join(recipes, '42-loan-collection.recipe.yaml'), '--mocks', path.join(examples, 'loan-collection.scenarios.yaml')], ['/silence', '/dtmf 5']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /Rs\. 12,250\.00/);
    assert.match(result.stdout, /-- call ended: callerHangup/);
  });

  it('runs scripted simulations and exits 0 when all pass', async () => {
    const result = await run(['--script', path.join(examples, 'appointment-reminder.scenarios.yaml')]);
    assert.equal(result.code, 0, result.stdout);
    assert.match(result.stdout, /9 passed, 0 failed \(offline engine\)/);
  });

  it('reports each unmet expectation and exits 1', async () => {
    const file = path.join(dir, 'wrong.scenarios.yaml');
    writeFileSync(
      file,
      `recipe: ${path.join(recipes, '41-appointment-reminder.recipe.yaml')}\nvariables: { patient_name: Asha }\nscenarios:\n  - name: wrong\n    turns: ["yes"]\n    expect:\n      path: [greet, close_cancelled]\n      disposition: cancelled\n      variables: { reminder_intent: cancel }\n      agentSays: ["this is never said"]\n      agentNeverSays: ["goodbye"]\n`,
    );
    const result = await run(['--script', file]);
    assert.equal(result.code, 1);
    assert.match(result.stdout, /FAIL {2}wrong/);
    assert.match(result.stdout, /path: expected greet > close_cancelled, got sample_appointment > greet > confirm > close_confirmed/);
    assert.match(result.stdout, /disposition: expected 'cancelled', got 'confirmed'/);
    assert.match(result.stdout, /variable reminder_intent: expected "cancel", got "confirm"/);
    assert.match(result.stdout, /agent never said 'this is never said'/);
    assert.match(result.stdout, /agent said 'goodbye'/);
  });

  it('runs scripted simulations over a chat-completions server with the key from the environment', async () => {
    const server = await new FakeChatCompletionsServer(offlineBrain('2026-11-21')).start();
    try {
      const result = await run(
        ['--script', path.join(examples, 'appointment-reminder.scenarios.yaml'), '--engine', 'llm', '--llm-base-url', server.baseUrl, '--llm-model', 'm', '--llm-api-key-env', 'MY_KEY'],
        [],
        { MY_KEY: 'sk-from-env' },
      );
      assert.equal(result.code, 0, result.stdout);
      assert.match(result.stdout, /passed, 0 failed \(llm engine\)/);
      assert.equal(server.requests[0]?.authorization, 'Bearer sk-from-env');
    } finally {
      await server.stop();
    }
  });

  it('rejects an llm engine without its settings', async () => {
    const result = await run(['x.yaml', '--engine', 'llm']);
    assert.equal(result.code, 64);
    assert.match(result.stderr, /needs --llm-base-url and --llm-model/);
  });
});
