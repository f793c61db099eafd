import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FakeChatCompletionsServer } from '../../../../test/fakes/fake-chat-completions.js';
import { offlineBrain } from '../../../../test/fakes/offline-brain.js';
import { LlmEngine } from '../../../platform/llm/llm-engine.js';
import { OfflineEngine } from '../../../platform/llm/offline-engine.js';
import { OpenAiCompatibleProvider } from '../../../platform/llm/openai-compatible.js';
import { QuickJsCodeRunner } from '../code-sandbox/quickjs-code-runner.js';
import { runScenarioFile } from './scenario-runner.js';

const examples = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../examples/recipes');
const files = readdirSync(examples).filter((f) => f.endsWith('.scenarios.yaml')).sort();

describe('example recipes pass their scripted simulations', function () {
  this.timeout(60_000);
  let code: QuickJsCodeRunner;
  let server: FakeChatCompletionsServer;
  before(async () => {
    code = new QuickJsCodeRunner({ workers: 1 });
    // The fake model answers on the wire like a real server; its "brain" routes deterministically.
    server = await new FakeChatCompletionsServer(offlineBrain('1999-01-01')).start();
  });
  after(async () => {
    await code.close();
    await server.stop();
  });

  it('finds the three examples', () => {
    assert.deepEqual(files, ['appointment-reminder.scenarios.yaml', 'loan-collection.scenarios.yaml', 'support-desk.scenarios.yaml']);
  });

  for (const file of files) {
    for (const engineKind of ['offline', 'llm'] as const) {
      it(`${file} with the ${engineKind} engine`, async () => {
        const engine = engineKind === 'offline' ? new OfflineEngine() : new LlmEngine(new OpenAiCompatibleProvider({ baseUrl: server.baseUrl, model: 'fake-model' }));
        const before = server.requests.length;
        const outcomes = await runScenarioFile(path.join(examples, file), { engine, engineKind, code });
        assert.ok(outcomes.length >= 4, `${outcomes.length} scenarios ran`);
        const failures = outcomes.flatMap((o) => o.failures.map((f) => `${o.scenario}: ${f}\n    agent: ${o.agentLines.join(' | ')}\n    warnings: ${o.warnings.join(' | ')}`));
        assert.deepEqual(failures, []);
        if (engineKind === 'llm') assert.ok(server.requests.length > before, 'turns went over the chat-completions wire');
      });
    }
  }
});
