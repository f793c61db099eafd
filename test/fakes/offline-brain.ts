import type { FakeBrain, WireChatRequest } from './fake-chat-completions.js';
import type { IntentSpec, VariableKind, VariableSpec, VariableValue } from '../../control-api/platform/llm/agent-engine.js';
import { extractValue } from '../../control-api/platform/llm/extract.js';
import { matchIntent } from '../../control-api/platform/llm/offline-engine.js';
import { routeToolName } from '../../control-api/platform/llm/llm-engine.js';

/**
 * A "model" for the fake server that reads the block's route_turn tool off the wire (intent list
 * in its description, variable kinds in its JSON Schema) and answers deterministically. It lets
 * the same scripted simulations run through the real adapter, SSE and tool-call decoding.
 */
export function offlineBrain(fallbackToday: string): FakeBrain {
  return (request: WireChatRequest) => {
    const last = request.messages[request.messages.length - 1];
    // Like a model, take "today" from the system prompt the engine wrote.
    const today = /Today's date is (\d{4}-\d{2}-\d{2})/.exec(request.messages[0]?.content ?? '')?.[1] ?? fallbackToday;
    const tool = request.tools?.find((t) => t.function.name === routeToolName);
    if (!tool || !last || last.role !== 'user') return { content: 'Hello, this is the fake model speaking.' };
    const intents = parseIntents(tool.function.description);
    const variables = parseVariables(tool.function.parameters);
    const intent = matchIntent(intents, last.content);
    const values: Record<string, VariableValue> = {};
    for (const spec of variables) {
      if (spec.kind === 'text' && variables.length > 1) continue;
      const value = extractValue(spec, last.content, today);
      if (value !== undefined) values[spec.name] = value;
    }
    return {
      content: intent ? '' : 'Could you tell me a little more?',
      toolCalls: [{ name: routeToolName, arguments: { intent: intent ?? 'none', variables: values } }],
    };
  };
}

function parseIntents(description: string): IntentSpec[] {
  const intents: IntentSpec[] = [];
  for (const line of description.split('\n')) {
    const match = /^- ([^:]+): (.*?)(?: \(e\.g\. (.*)\))?$/.exec(line);
    if (!match?.[1]) continue;
    const examples = [...(match[3] ?? '').matchAll(/"([^"]*)"/g)].map((m) => m[1] ?? '');
    intents.push({ name: match[1], description: match[2] ?? '', examples });
  }
  return intents;
}

function parseVariables(parameters: Record<string, unknown>): VariableSpec[] {
  const props = ((parameters.properties as Record<string, { properties?: Record<string, Record<string, unknown>> }> | undefined)?.variables?.properties) ?? {};
  return Object.entries(props).map(([name, schema]) => {
    const kind: VariableKind = Array.isArray(schema.enum) ? 'enum' : schema.type === 'boolean' ? 'boolean' : schema.type === 'number' ? 'number' : schema.format === 'date' ? 'date' : schema.pattern === '^[0-9]+$' ? 'digits' : 'text';
    return { name, description: String(schema.description ?? ''), kind, options: Array.isArray(schema.enum) ? (schema.enum as string[]) : undefined };
  });
}
