import type { InsightParameter } from '../../model/domain/insight-parameter.js';
import { ProviderError, type ChatProvider, type ToolDefinition } from '../../platform/llm/chat-provider.js';
import type { InsightValue } from '../calls/call-types.js';
import type { ExtractionRequest, ExtractionResult, InsightExtractor } from './insight-extractor.js';
import { coerceInsightValue, transcriptText } from './insight-values.js';

/**
 * Extraction with a chat-completions model. Structured output goes through one forced function
 * call (`record_insights`) whose JSON Schema has one required, nullable property per parameter:
 * function calling with a forced tool is the structured-output mechanism every
 * OpenAI-compatible server implements (hosted, vLLM, llama.cpp, Ollama), unlike `response_format`.
 * The arguments are still validated per type, because a model's JSON is a suggestion.
 */
export const recordInsightsTool = 'record_insights';

export interface LlmInsightExtractorOptions {
  /** Longer transcripts keep their start and end (greeting and outcome matter most). Default 60,000. */
  readonly maxTranscriptChars?: number;
}

export class LlmInsightExtractor implements InsightExtractor {
  readonly name: string;

  constructor(
    private readonly provider: ChatProvider,
    private readonly options: LlmInsightExtractorOptions = {},
  ) {
    this.name = `llm:${provider.name}`;
  }

  async extract(request: ExtractionRequest): Promise<ExtractionResult> {
    if (request.parameters.length === 0) return { values: {}, issues: [] };
    const result = await this.provider.chat({
      messages: [
        { role: 'system', content: systemPrompt(request) },
        { role: 'user', content: `Call transcript:\n\n${clip(transcriptText(request.transcript), this.options.maxTranscriptChars ?? 60_000)}` },
      ],
      tools: [insightsTool(request.parameters)],
      toolChoice: { name: recordInsightsTool },
      temperature: 0,
      signal: request.signal,
    });
    const args = parseArguments(result.toolCalls.find((c) => c.name === recordInsightsTool)?.arguments ?? result.content);
    const values: Record<string, InsightValue | null> = {};
    const issues: string[] = [];
    for (const parameter of request.parameters) {
      const coerced = coerceInsightValue(parameter, args[parameter.name], request.today);
      values[parameter.name] = coerced.value;
      if (coerced.issue) issues.push(coerced.issue);
    }
    return { values, issues };
  }
}

function systemPrompt(request: ExtractionRequest): string {
  return [
    'You analyse the transcript of a finished phone call between an AI agent and a caller.',
    `Call ${recordInsightsTool} once with a value for every parameter, following each parameter's instruction.`,
    'Use only what the transcript says. When it does not answer a parameter, use null rather than guessing.',
    'Lines marked [Interrupted] were cut off by the caller; the part marked "not spoken" was never heard.',
    `Dates are YYYY-MM-DD; today is ${request.today}.`,
    request.language ? `The call's primary language is ${request.language}; text values may stay in the language the caller used.` : '',
  ]
    .filter(Boolean)
    .join('\n');
}

function propertySchema(parameter: InsightParameter): Record<string, unknown> {
  const description = parameter.description;
  switch (parameter.type) {
    case 'text':
      return { type: ['string', 'null'], maxLength: 300, description };
    case 'boolean':
      return { type: ['boolean', 'null'], description };
    case 'number':
      return { type: ['number', 'null'], description };
    case 'date':
      return { type: ['string', 'null'], format: 'date', description: `${description} (YYYY-MM-DD)` };
    case 'enum':
      return { type: ['string', 'null'], enum: [...(parameter.options ?? []), null], description };
  }
}

export function insightsTool(parameters: readonly InsightParameter[]): ToolDefinition {
  return {
    name: recordInsightsTool,
    description: 'Record the post-call insight values extracted from the transcript.',
    parameters: {
      type: 'object',
      properties: Object.fromEntries(parameters.map((p) => [p.name, propertySchema(p)])),
      required: parameters.map((p) => p.name),
      additionalProperties: false,
    },
  };
}

function parseArguments(text: string): Record<string, unknown> {
  // Some servers ignore a forced tool and answer with the JSON object as text (maybe fenced).
  const json = text.trim().replace(/^```(?:json)?\s*|\s*```$/g, '');
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (error) {
    throw new ProviderError('the model did not return record_insights arguments as JSON', true, undefined, { cause: error });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ProviderError('the model returned record_insights arguments that are not an object', true);
  }
  return parsed as Record<string, unknown>;
}

function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const half = Math.floor(max / 2);
  return `${text.slice(0, half)}\n[... transcript shortened ...]\n${text.slice(text.length - half)}`;
}
