import type { Kysely } from 'kysely';
import type { Logger } from '../../../core/logger.js';
import type { SecretBox } from '../../platform/crypto/secret-box.js';
import type { AgentEngine } from '../../platform/llm/agent-engine.js';
import { SafeHttp } from '../../platform/net/safe-http.js';
import type { Database } from '../../platform/store/schema.js';
import { tenantModels } from '../../model/tenants/tenant-llm.js';
import { createTenantsRepository } from '../../model/tenants/tenants-repository.js';
import { SignedWebhookSender } from '../../platform/webhooks/webhook-sender.js';
import { PgKnowledgeSearch } from './knowledge/pg-knowledge-search.js';
import { StoreAuthProfileResolver, tenantAllowlist } from './knowledge/store-services.js';
import type { WebhookSender } from '../../platform/net/outbound-http.js';
import type { CodeRunner, RuntimeServices } from './runtime/services.js';

/**
 * Runtime services for a tenant's recipes, built from the platform's store: SSRF-safe HTTP with
 * the tenant's allowlist, auth profiles and knowledge from the domain tables, webhooks signed with
 * the tenant's secret. The engine is the one the tenant's `settings.llm` selects (offline when
 * there is none), unless `engineFor` overrides it.
 */
export interface PlatformServicesDeps {
  readonly db: Kysely<Database>;
  readonly box: SecretBox;
  readonly code: CodeRunner;
  readonly logger: Logger;
  readonly engineFor?: (tenantId: string) => AgentEngine | Promise<AgentEngine>;
  /** Replaces the signed sender (simulations record webhooks instead of sending them). */
  readonly webhooks?: WebhookSender;
  readonly silenceTimeoutMs?: number;
}

export function platformServices(deps: PlatformServicesDeps): (tenantId: string) => Promise<RuntimeServices> {
  const http = new SafeHttp({ allowlist: tenantAllowlist(deps.db) });
  const tenants = createTenantsRepository(deps.box);
  const webhooks =
    deps.webhooks ??
    new SignedWebhookSender({ http, secretFor: async (tenantId) => (await tenants.settingsWithSecrets(deps.db, tenantId))?.webhookSecret ?? '' });
  const knowledge = new PgKnowledgeSearch(deps.db);
  const authProfiles = new StoreAuthProfileResolver(deps.db, deps.box);
  const models = tenantModels(deps.db, tenants);
  return async (tenantId) => ({
    engine: deps.engineFor ? await deps.engineFor(tenantId) : await models.engineFor(tenantId),
    http,
    code: deps.code,
    webhooks,
    knowledge,
    authProfiles,
    logger: deps.logger,
    silenceTimeoutMs: deps.silenceTimeoutMs ?? 8_000,
  });
}
