import { z } from 'zod';
import type { AgentEngine } from './agent-engine.js';
import { LlmEngine } from './llm-engine.js';
import { OfflineEngine } from './offline-engine.js';
import { OpenAiCompatibleProvider } from './openai-compatible.js';

/**
 * A tenant's choice of conversation engine. The API key is resolved by the caller (it is a
 * secret stored sealed), so this shape can be logged and served without it.
 */
export const engineConfigSchema = z.discriminatedUnion('provider', [
  z.object({ provider: z.literal('offline') }),
  z.object({
    provider: z.literal('openaiCompatible'),
    baseUrl: z.url({ protocol: /^https?$/, error: 'baseUrl must be an http(s) URL' }),
    model: z.string().min(1).max(200),
    timeoutMs: z.number().int().min(1_000).max(120_000).default(30_000),
    maxRetries: z.number().int().min(0).max(5).default(2),
    stream: z.boolean().default(true),
  }),
]);
export type EngineConfig = z.infer<typeof engineConfigSchema>;

export function createAgentEngine(config: EngineConfig, apiKey?: string): AgentEngine {
  if (config.provider === 'offline') return new OfflineEngine();
  return new LlmEngine(
    new OpenAiCompatibleProvider({ baseUrl: config.baseUrl, model: config.model, apiKey, timeoutMs: config.timeoutMs, maxRetries: config.maxRetries, stream: config.stream }),
  );
}
