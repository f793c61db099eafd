import type { AgentEngine, TurnRequest, TurnResult, VariableSpec, VariableValue } from './agent-engine.js';
import { ProviderError, type ChatMessage, type ChatProvider, type ToolDefinition } from './chat-provider.js';
import { coerceValue } from './extract.js';

/**
 * Drives a chat-completions model for one block turn. The spoken reply is the streamed message
 * content; routing and extraction come back through one function call (`route_turn`), whose
 * arguments are validated against the block's declared intents and variable kinds, because a
 * model's JSON is a suggestion, not a contract.
 */
export const routeToolName = 'route_turn';

export class LlmEngine implements AgentEngine {
  readonly name: string;

  constructor(private readonly provider: ChatProvider) {
    this.name = `llm:${provider.name}`;
  }

  async turn(request: TurnRequest): Promise<TurnResult> {
    const tools = request.userText === undefined ? [] : routeTool(request);
    const messages: ChatMessage[] = [
      { role: 'system', content: systemPrompt(request) },
      ...request.history,
      request.userText === undefined
        ? { role: 'user', content: '(The call has reached this step. Speak your opening line now.)' }
        : { role: 'user', content: request.userText },
    ];
    const result = await this.provider.chat({
      messages,
      tools,
      toolChoice: tools.length > 0 ? 'auto' : undefined,
      temperature: 0.2 + 0.6 * clamp(request.expressiveness),
      signal: request.signal,
      onDelta: request.onDelta,
    });
    const call = result.toolCalls.find((c) => c.name === routeToolName);
    if (!call) return { reply: result.content.trim(), values: {} };
    let args: { intent?: unknown; variables?: Record<string, unknown> };
    try {
      args = JSON.parse(call.arguments) as typeof args;
    } catch (error) {
      throw new ProviderError('model returned malformed route_turn arguments', true, undefined, { cause: error });
    }
    const intent = request.intents.find((i) => i.name === args.intent)?.name;
    const today = request.today ?? new Date().toISOString().slice(0, 10);
    const values: Record<string, VariableValue> = {};
    for (const spec of request.variables) {
      const value = coerceValue(spec, args.variables?.[spec.name], today);
      if (value !== undefined) values[spec.name] = value;
    }
    const reply = result.content.trim();
    return intent ? { reply, intent, values } : { reply, values };
  }
}

function clamp(value: number): number {
  return Math.min(1, Math.max(0, Number.isFinite(value) ? value : 0.5));
}

function systemPrompt(request: TurnRequest): string {
  const e = clamp(request.expressiveness);
  const style = e < 0.34 ? 'Be concise: one short sentence.' : e < 0.67 ? 'Keep replies to one or two sentences.' : 'Be warm and conversational, up to four sentences.';
  const parts = [request.instructions.trim(), `You are speaking on a phone call; your text is read aloud. ${style}`];
  if (request.today) parts.push(`Today's date is ${request.today}.`);
  if (request.knowledge && request.knowledge.length > 0) {
    parts.push(`Answer only from these knowledge passages when they are relevant:\n${request.knowledge.map((k, i) => `[${i + 1}] ${k}`).join('\n')}`);
  }
  if (request.intents.length > 0 || request.variables.length > 0) {
    parts.push(`After each caller turn call ${routeToolName}: set "intent" when the caller's turn clearly matches one, and fill "variables" with values the caller stated. Also reply in text unless the intent ends this step.`);
  }
  return parts.filter((p) => p.length > 0).join('\n\n');
}

function routeTool(request: TurnRequest): ToolDefinition[] {
  if (request.intents.length === 0 && request.variables.length === 0) return [];
  const intentLines = request.intents.map((i) => `- ${i.name}: ${i.description}${i.examples?.length ? ` (e.g. ${i.examples.map((x) => `"${x}"`).join(', ')})` : ''}`);
  const properties: Record<string, unknown> = {};
  for (const spec of request.variables) properties[spec.name] = variableSchema(spec);
  return [
    {
      name: routeToolName,
      description: ['Report the intent detected in the caller turn and values the caller gave.', intentLines.length ? `Intents:\n${intentLines.join('\n')}` : ''].filter(Boolean).join('\n'),
      parameters: {
        type: 'object',
        properties: {
          intent: { type: 'string', enum: [...request.intents.map((i) => i.name), 'none'], description: 'Detected intent, or none' },
          variables: { type: 'object', properties, additionalProperties: false },
        },
        required: ['intent'],
      },
    },
  ];
}

function variableSchema(spec: VariableSpec): Record<string, unknown> {
  switch (spec.kind) {
    case 'boolean':
      return { type: 'boolean', description: spec.description };
    case 'number':
      return { type: 'number', description: spec.description };
    case 'date':
      return { type: 'string', format: 'date', description: `${spec.description} (YYYY-MM-DD)` };
    case 'enum':
      return { type: 'string', enum: [...(spec.options ?? [])], description: spec.description };
    case 'digits':
      return spec.length
        ? { type: 'string', pattern: `^[0-9]{${spec.length}}$`, description: `${spec.description} (exactly ${spec.length} digits, as said: leading zeros kept)` }
        : { type: 'string', pattern: '^[0-9]+$', description: `${spec.description} (digits only, as said: leading zeros kept)` };
    case 'text':
      return { type: 'string', description: spec.description };
  }
}
