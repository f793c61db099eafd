import type { Kysely } from 'kysely';
import type { Logger } from '../../../core/logger.js';
import { createSecretBox } from '../../platform/crypto/secret-box.js';
import type { ChatProvider } from '../../platform/llm/chat-provider.js';
import { SafeHttp } from '../../platform/net/safe-http.js';
import type { Database } from '../../platform/store/schema.js';
import { tenantModels } from '../../model/tenants/tenant-llm.js';
import { createTenantsRepository } from '../../model/tenants/tenants-repository.js';
import { AnalysisWorker, type AnalysisWorkerOptions } from './analysis-worker.js';
import type { InsightExtractor } from './insight-extractor.js';
import { LlmInsightExtractor } from './llm-insight-extractor.js';
import { OfflineInsightExtractor } from './offline-insight-extractor.js';

/**
 * The analysis worker as the platform runs it: webhook URL and secret from the tenant's settings
 * (secret opened with the platform key), SSRF-safe delivery honouring the tenant's allowlist, and
 * extraction with the model of the call's tenant (`settings.llm`), the offline extractor for a
 * tenant without one. `provider` forces one chat provider for every tenant (benchmarks, tests).
 */
export interface PlatformAnalysisOptions extends Partial<Omit<AnalysisWorkerOptions, 'db' | 'logger' | 'http' | 'tenantWebhook' | 'extractor'>> {
  readonly db: Kysely<Database>;
  readonly logger: Logger;
  readonly secretKey: Buffer;
  readonly provider?: ChatProvider;
}

export function createPlatformAnalysisWorker(options: PlatformAnalysisOptions): AnalysisWorker {
  const { db, logger, secretKey, provider, ...tuning } = options;
  const tenants = createTenantsRepository(createSecretBox(secretKey));
  const settings = (tenantId: string) => tenants.settingsWithSecrets(db, tenantId);
  return new AnalysisWorker({
    ...tuning,
    db,
    logger: logger.child({ part: 'analysis' }),
    extractor: provider ? new LlmInsightExtractor(provider) : tenantExtractor(db, tenants),
    http: new SafeHttp({ allowlist: async (tenantId) => (await settings(tenantId))?.ssrfAllowlist ?? [] }),
    tenantWebhook: async (tenantId) => {
      const s = await settings(tenantId);
      return s ? { ...(s.webhookUrl ? { url: s.webhookUrl } : {}), ...(s.webhookSecret ? { secret: s.webhookSecret } : {}) } : undefined;
    },
  });
}

/** Picks the extractor per call: the tenant's model when its settings name one, else offline. */
function tenantExtractor(db: Kysely<Database>, tenants: ReturnType<typeof createTenantsRepository>): InsightExtractor {
  const models = tenantModels(db, tenants);
  const offline = new OfflineInsightExtractor();
  return {
    name: 'tenant',
    async extract(request) {
      const provider = request.tenantId ? await models.providerFor(request.tenantId) : undefined;
      return (provider ? new LlmInsightExtractor(provider) : offline).extract(request);
    },
  };
}
