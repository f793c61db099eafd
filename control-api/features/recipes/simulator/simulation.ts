import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { silentLogger, type Logger } from '../../../../core/logger.js';
import { parseOrThrow } from '../../../platform/validation.js';
import type { AgentEngine } from '../../../platform/llm/agent-engine.js';
import { defaultBlocks } from '../blocks/index.js';
import { validRecipeSchema } from '../../../model/recipes/recipe-graph.js';
import type { Recipe } from '../../../model/recipes/recipe-schema.js';
import type { CallContext } from '../runtime/call-context.js';
import { RecipeRun, type RunResult } from '../runtime/recipe-run.js';
import type { CodeRunner, KnowledgeSearch } from '../runtime/services.js';
import type { Conversation } from '../../../../core/ports/conversation.js';
import { scriptedTurns, TextConversation, type CallerTurn } from '../runtime/text-conversation.js';
import { scenarioFileSchema, type CallerTurnInput, type Expectation, type Scenario, type ScenarioFile } from './scenario-schema.js';
import { MockHttp, RecordingWebhooks, type SentWebhook } from './simulation-services.js';

/** Reads a recipe from YAML or JSON; accepts a bare recipe or an apply document (`kind: Recipe`). */
export async function loadRecipe(file: string): Promise<Recipe> {
  const raw = parseYaml(await readFile(file, 'utf8')) as unknown;
  const doc = raw && typeof raw === 'object' && (raw as { kind?: unknown }).kind === 'Recipe' ? (raw as { spec: unknown }).spec : raw;
  return parseOrThrow(validRecipeSchema, doc, 'recipe') as Recipe;
}

export async function loadScenarioFile(file: string): Promise<{ file: ScenarioFile; recipe: Recipe }> {
  const parsed = parseOrThrow(scenarioFileSchema, parseYaml(await readFile(file, 'utf8')), 'scenario file') as ScenarioFile;
  return { file: parsed, recipe: await loadRecipe(path.resolve(path.dirname(file), parsed.recipe)) };
}

export function toCallerTurn(turn: CallerTurnInput): CallerTurn {
  if (typeof turn === 'string') return { kind: 'utterance', text: turn };
  if ('say' in turn) return { kind: 'utterance', text: turn.say };
  if ('dtmf' in turn) return { kind: 'dtmf', digits: turn.dtmf };
  if ('silence' in turn) return { kind: 'silence' };
  return { kind: 'hangup' };
}

export interface SimulationEnvironment {
  readonly engine: AgentEngine;
  readonly engineKind: 'offline' | 'llm';
  readonly code: CodeRunner;
  readonly knowledge?: { readonly search: KnowledgeSearch; readonly tenantId: string };
  readonly logger?: Logger;
  /**
   * The caller's side as a real conversation instead of the scripted text one (bench/voice-branches.ts
   * runs the scenarios over RTP with a synthesised caller); the run ends when `signal` aborts.
   */
  readonly conversation?: (scenario: Scenario) => { readonly conversation: Conversation; readonly signal?: AbortSignal };
}

export interface ScenarioOutcome {
  readonly scenario: string;
  readonly result: RunResult;
  readonly agentLines: readonly string[];
  readonly webhooks: readonly SentWebhook[];
  readonly warnings: readonly string[];
  readonly failures: readonly string[];
}

export function callContext(file: ScenarioFile, tenantId: string, variables: Record<string, string | number | boolean>): CallContext {
  const at = file.call.now ? Date.parse(file.call.now) : Date.now();
  return {
    callId: 'simulation',
    tenantId,
    tenantName: file.call.tenantName,
    timezone: file.call.timezone,
    callerNumber: file.call.callerNumber,
    calledNumber: file.call.calledNumber,
    direction: 'simulation',
    language: file.call.language,
    campaignVariables: variables,
    now: () => at,
  };
}

export async function runScenario(recipe: Recipe, file: ScenarioFile, scenario: Scenario, env: SimulationEnvironment): Promise<ScenarioOutcome> {
  const webhooks = new RecordingWebhooks();
  const live = env.conversation?.(scenario);
  const text = live ? undefined : new TextConversation({ nextTurn: scriptedTurns(scenario.turns.map(toCallerTurn)), onTransfer: () => scenario.transfer });
  const conversation = live?.conversation ?? (text as TextConversation);
  const tenantId = env.knowledge?.tenantId ?? '00000000-0000-4000-8000-000000000000';
  const run = new RecipeRun({
    recipe,
    conversation,
    context: callContext(file, tenantId, { ...file.variables, ...scenario.variables }),
    services: {
      engine: env.engine,
      http: new MockHttp([...scenario.http, ...file.http]),
      code: env.code,
      webhooks,
      knowledge: env.knowledge?.search,
      authProfiles: { resolve: async (_tenant, name) => file.authProfiles[name] },
      logger: env.logger ?? silentLogger,
      silenceTimeoutMs: 8_000,
    },
    blocks: defaultBlocks,
  });
  const warnings: string[] = [];
  run.on('warning', (w) => warnings.push(`${w.blockId}: ${w.message}`));
  run.on('error', (e) => warnings.push(`${e.blockId}: ERROR ${e.message}`));
  const result = await run.run(live?.signal);
  const agentLines = text?.agentLines ?? result.transcript.filter((t) => t.speaker === 'agent').map((t) => t.text);
  const outcome = { scenario: scenario.name, result, agentLines, webhooks: webhooks.sent, warnings };
  return { ...outcome, failures: check(scenario.expect, outcome, env.engineKind) };
}

function check(expect: Expectation, run: Omit<ScenarioOutcome, 'failures'>, engineKind: 'offline' | 'llm'): string[] {
  const failures: string[] = [];
  const { result } = run;
  if (expect.path && !isDeepStrictEqual(expect.path, result.path)) failures.push(`path: expected ${expect.path.join(' > ')}, got ${result.path.join(' > ')}`);
  for (const [name, value] of Object.entries(expect.variables ?? {})) {
    const actual = result.variables[name] ?? null;
    if (!isDeepStrictEqual(actual, value)) failures.push(`variable ${name}: expected ${JSON.stringify(value)}, got ${JSON.stringify(actual)}`);
  }
  if (expect.disposition !== undefined && expect.disposition !== result.disposition) failures.push(`disposition: expected '${expect.disposition}', got '${result.disposition ?? ''}'`);
  if (expect.end && expect.end !== result.reason) failures.push(`end: expected ${expect.end}, got ${result.reason}`);
  if (expect.transferTarget && expect.transferTarget !== result.transferTarget) failures.push(`transfer: expected ${expect.transferTarget}, got ${result.transferTarget ?? 'none'}`);
  if (expect.agentSays && engineKind === 'offline') {
    let from = 0;
    for (const needle of expect.agentSays) {
      const index = run.agentLines.findIndex((line, i) => i >= from && line.includes(needle));
      if (index === -1) {
        failures.push(`agent never said '${needle}' (after line ${from})`);
        break;
      }
      from = index + 1;
    }
  }
  for (const needle of expect.agentNeverSays ?? []) {
    const line = run.agentLines.find((l) => l.includes(needle));
    if (line) failures.push(`agent said '${needle}': "${line}"`);
  }
  for (const wanted of expect.webhooks ?? []) {
    const hit = run.webhooks.some((w) => w.url === wanted.url && Object.entries(wanted.payload ?? {}).every(([k, v]) => isDeepStrictEqual((w.payload as Record<string, unknown>)[k], v)));
    if (!hit) failures.push(`no webhook to ${wanted.url} with ${JSON.stringify(wanted.payload ?? {})}`);
  }
  return failures;
}
