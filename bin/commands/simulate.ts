import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { silentLogger } from '../../core/logger.js';
import type { AgentEngine } from '../../control-api/platform/llm/agent-engine.js';
import { LlmEngine } from '../../control-api/platform/llm/llm-engine.js';
import { OfflineEngine } from '../../control-api/platform/llm/offline-engine.js';
import { OpenAiCompatibleProvider } from '../../control-api/platform/llm/openai-compatible.js';
import { SafeHttp } from '../../control-api/platform/net/safe-http.js';
import { defaultBlocks } from '../../control-api/features/recipes/blocks/index.js';
import { QuickJsCodeRunner } from '../../control-api/features/recipes/code-sandbox/quickjs-code-runner.js';
import { RecipeRun } from '../../control-api/features/recipes/runtime/recipe-run.js';
import type { OutboundHttp } from '../../control-api/platform/net/outbound-http.js';
import { TextConversation, type CallerTurn } from '../../control-api/features/recipes/runtime/text-conversation.js';
import { runScenarioFile } from '../../control-api/features/recipes/simulator/scenario-runner.js';
import { scenarioFileSchema, type ScenarioFile } from '../../control-api/features/recipes/simulator/scenario-schema.js';
import { MockHttp, RecordingWebhooks, simulationKnowledge } from '../../control-api/features/recipes/simulator/simulation-services.js';
import { callContext, loadRecipe, loadScenarioFile } from '../../control-api/features/recipes/simulator/simulation.js';
import type { CliCommand } from './command.js';

const usage = `usage:
  npm run cli -- simulate <recipe.yaml|json> [--vars k=v ...] [--mocks <scenarios.yaml>] [--allow <host|ip|cidr> ...]
  npm run cli -- simulate --script <scenarios.yaml> [--only <text>]
engine options (both modes):
  --engine offline|llm   offline (default) needs no key; llm speaks the chat-completions protocol
  --llm-base-url <url>   e.g. https://api.openai.com/v1 or http://127.0.0.1:8080/v1
  --llm-model <name>     --llm-api-key-env <VAR> (default LLM_API_KEY; keys never go on the command line)
interactive input: a line is what the caller says; /dtmf 123, /silence, /hangup, /vars
without --mocks, API blocks call the real network (loopback/private targets need --allow) and
webhooks are printed, not sent.
`;

export interface SimulateIo {
  readonly lines: AsyncIterator<string>;
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly env: Readonly<Record<string, string | undefined>>;
}

function engineFrom(values: Record<string, unknown>, env: SimulateIo['env']): { engine: AgentEngine; kind: 'offline' | 'llm' } {
  if ((values.engine ?? 'offline') === 'offline') return { engine: new OfflineEngine(), kind: 'offline' };
  if (values.engine !== 'llm') throw new Error(`unknown engine '${String(values.engine)}'`);
  const baseUrl = values['llm-base-url'];
  const model = values['llm-model'];
  if (typeof baseUrl !== 'string' || typeof model !== 'string') throw new Error('--engine llm needs --llm-base-url and --llm-model');
  const apiKey = env[typeof values['llm-api-key-env'] === 'string' ? values['llm-api-key-env'] : 'LLM_API_KEY'];
  return { engine: new LlmEngine(new OpenAiCompatibleProvider({ baseUrl, model, apiKey })), kind: 'llm' };
}

function parseVars(pairs: readonly string[]): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at < 1) throw new Error(`--vars expects k=v, got '${pair}'`);
    vars[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return vars;
}

export async function runSimulateCommand(args: readonly string[], io: SimulateIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...args],
      allowPositionals: true,
      options: {
        vars: { type: 'string', multiple: true, default: [] },
        script: { type: 'string' },
        only: { type: 'string' },
        mocks: { type: 'string' },
        allow: { type: 'string', multiple: true, default: [] },
        engine: { type: 'string' },
        'llm-base-url': { type: 'string' },
        'llm-model': { type: 'string' },
        'llm-api-key-env': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    io.stderr(`${(error as Error).message}\n${usage}`);
    return 64;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.stdout(usage);
    return 0;
  }
  let engine;
  try {
    engine = engineFrom(values, io.env);
  } catch (error) {
    io.stderr(`${(error as Error).message}\n`);
    return 64;
  }
  if (values.script) return scripted(values.script, values.only, engine, io);
  const recipePath = positionals[0];
  if (!recipePath) {
    io.stderr(usage);
    return 64;
  }
  return interactive(recipePath, values, engine, io);
}

async function scripted(file: string, only: string | undefined, engine: { engine: AgentEngine; kind: 'offline' | 'llm' }, io: SimulateIo): Promise<number> {
  const outcomes = await runScenarioFile(file, { engine: engine.engine, engineKind: engine.kind, only });
  let failed = 0;
  for (const outcome of outcomes) {
    const ok = outcome.failures.length === 0;
    if (!ok) failed++;
    io.stdout(`${ok ? 'PASS' : 'FAIL'}  ${outcome.scenario}  (${outcome.result.reason}${outcome.result.disposition ? `: ${outcome.result.disposition}` : ''})\n`);
    for (const failure of outcome.failures) io.stdout(`      ${failure}\n`);
    if (!ok) for (const warning of outcome.warnings) io.stdout(`      warning ${warning}\n`);
  }
  io.stdout(`${outcomes.length - failed} passed, ${failed} failed (${engine.kind} engine)\n`);
  return failed === 0 ? 0 : 1;
}

async function interactive(
  recipePath: string,
  values: { vars?: string[]; mocks?: string; allow?: string[] },
  engine: { engine: AgentEngine; kind: 'offline' | 'llm' },
  io: SimulateIo,
): Promise<number> {
  const recipe = await loadRecipe(recipePath);
  const mocks: ScenarioFile = values.mocks ? (await loadScenarioFile(values.mocks)).file : scenarioFileSchema.parse({ recipe: recipePath, scenarios: [{ name: 'interactive' }] });
  const knowledge = mocks.knowledge.length > 0 ? await simulationKnowledge(mocks.knowledge) : undefined;
  const code = new QuickJsCodeRunner({ workers: 1 });
  const webhooks = new RecordingWebhooks();
  const http: OutboundHttp = values.mocks ? new MockHttp(mocks.http) : new SafeHttp({ allowlist: () => values.allow ?? [] });
  const nextTurn = async (): Promise<CallerTurn> => {
    for (;;) {
      io.stdout('you> ');
      const next = await io.lines.next();
      if (next.done) return { kind: 'hangup' };
      const line = next.value.trim();
      if (line === '/hangup') return { kind: 'hangup' };
      if (line === '/silence') return { kind: 'silence' };
      if (line.startsWith('/dtmf ')) return { kind: 'dtmf', digits: line.slice(6).trim() };
      if (line === '/vars') {
        io.stdout(`${JSON.stringify(run.variables(), null, 2)}\n`);
        continue;
      }
      if (line) return { kind: 'utterance', text: line };
    }
  };
  const conversation = new TextConversation({ nextTurn, onSay: (text) => io.stdout(`agent> ${text}\n`), onTransfer: () => ({ ok: true }) });
  const run: RecipeRun = new RecipeRun({
    recipe,
    conversation,
    context: callContext(mocks, knowledge?.tenantId ?? '00000000-0000-4000-8000-000000000000', { ...mocks.variables, ...parseVars(values.vars ?? []) }),
    services: {
      engine: engine.engine,
      http,
      code,
      webhooks,
      knowledge: knowledge?.search,
      authProfiles: { resolve: async (_t, name) => mocks.authProfiles[name] },
      logger: silentLogger,
      silenceTimeoutMs: 8_000,
    },
    blocks: defaultBlocks,
  });
  run.on('blockEntered', (e) => io.stderr(`  [${e.type} ${e.blockId}]\n`));
  run.on('variableSet', (e) => io.stderr(`  [set ${e.name} = ${JSON.stringify(e.value)}]\n`));
  run.on('warning', (e) => io.stderr(`  [warning ${e.blockId}: ${e.message}]\n`));
  try {
    const result = await run.run();
    for (const hook of webhooks.sent) io.stderr(`  [webhook ${hook.url} ${JSON.stringify(hook.payload)}]\n`);
    io.stdout(`\n-- call ended: ${result.reason}${result.disposition ? `, disposition ${result.disposition}` : ''}${result.transferTarget ? `, transferred to ${result.transferTarget}` : ''}\n`);
    io.stdout(`-- path: ${result.path.join(' > ')}\n-- variables: ${JSON.stringify(result.variables)}\n`);
    return 0;
  } finally {
    await code.close();
    await knowledge?.close();
  }
}

export const simulateCommand: CliCommand = {
  summary: 'chat with a recipe in the terminal, or run scripted simulations (--script)',
  run: (args) => {
    const rl = createInterface({ input: process.stdin, terminal: false });
    const lines = rl[Symbol.asyncIterator]();
    return runSimulateCommand(args, {
      lines,
      stdout: (t) => void process.stdout.write(t),
      stderr: (t) => void process.stderr.write(t),
      env: process.env,
    }).finally(() => rl.close());
  },
};
