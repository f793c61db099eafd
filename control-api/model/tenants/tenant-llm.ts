import type { Kysely } from 'kysely';
import type { TenantLlm } from '../domain/tenant.js';
import type { AgentEngine } from '../../platform/llm/agent-engine.js';
import type { ChatProvider } from '../../platform/llm/chat-provider.js';
import { LlmEngine } from '../../platform/llm/llm-engine.js';
import { OfflineEngine } from '../../platform/llm/offline-engine.js';
import { OpenAiCompatibleProvider } from '../../platform/llm/openai-compatible.js';
import type { Database } from '../../platform/store/schema.js';
import type { TenantsRepository } from './tenants-repository.js';

/**
 * The model a tenant's settings select (`settings.llm`), for recipes and post-call analysis.
 * No block or `provider: offline`: undefined, and callers use the offline engine / extractor.
 * The key is opened only here and handed to the HTTP client; it is never logged.
 */
export interface TenantModels {
  /** The tenant's chat provider, or undefined for the offline one. */
  providerFor(tenantId: string): Promise<ChatProvider | undefined>;
  /** The conversation engine for recipes: the LLM engine over the tenant's provider, else offline. */
  engineFor(tenantId: string): Promise<AgentEngine>;
}

export function providerFromSettings(llm: TenantLlm | undefined): ChatProvider | undefined {
  if (!llm || llm.provider !== 'openaiCompatible' || !llm.baseUrl || !llm.model) return undefined;
  return new OpenAiCompatibleProvider({
    baseUrl: llm.baseUrl,
    model: llm.model,
    ...(typeof llm.apiKey === 'string' ? { apiKey: llm.apiKey } : {}),
    timeoutMs: llm.timeoutMs,
    maxRetries: llm.maxRetries,
  });
}

export function tenantModels(db: Kysely<Database>, tenants: Pick<TenantsRepository, 'settingsWithSecrets'>): TenantModels {
  const offline = new OfflineEngine();
  const providerFor = async (tenantId: string) => providerFromSettings((await tenants.settingsWithSecrets(db, tenantId))?.llm);
  return {
    providerFor,
    async engineFor(tenantId) {
      const provider = await providerFor(tenantId);
      return provider ? new LlmEngine(provider) : offline;
    },
  };
}
