import type { Logger } from '../../../../core/logger.js';
import type { AgentEngine } from '../../../platform/llm/agent-engine.js';
import { QuickJsCodeRunner } from '../code-sandbox/quickjs-code-runner.js';
import type { CodeRunner } from '../runtime/services.js';
import { simulationKnowledge } from './simulation-services.js';
import { loadScenarioFile, runScenario, type ScenarioOutcome } from './simulation.js';

export interface ScenarioFileOptions {
  readonly engine: AgentEngine;
  readonly engineKind: 'offline' | 'llm';
  /** Shared sandbox; one is created (and closed) per file when absent. */
  readonly code?: CodeRunner;
  readonly logger?: Logger;
  /** Only scenarios whose name contains this. */
  readonly only?: string;
}

/** Runs every scenario of a scripted simulation file that applies to the engine. */
export async function runScenarioFile(path: string, options: ScenarioFileOptions): Promise<ScenarioOutcome[]> {
  const { file, recipe } = await loadScenarioFile(path);
  const ownCode = options.code ? undefined : new QuickJsCodeRunner({ workers: 1 });
  const code = options.code ?? (ownCode as QuickJsCodeRunner);
  const knowledge = file.knowledge.length > 0 ? await simulationKnowledge(file.knowledge) : undefined;
  try {
    const outcomes: ScenarioOutcome[] = [];
    for (const scenario of file.scenarios) {
      if (!scenario.engines.includes(options.engineKind)) continue;
      if (options.only && !scenario.name.includes(options.only)) continue;
      outcomes.push(await runScenario(recipe, file, scenario, { engine: options.engine, engineKind: options.engineKind, code, knowledge, logger: options.logger }));
    }
    return outcomes;
  } finally {
    await knowledge?.close();
    await ownCode?.close();
  }
}
