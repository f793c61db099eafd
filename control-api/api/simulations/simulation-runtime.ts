import type { Kysely } from 'kysely';
import type { Logger } from '../../../core/logger.js';
import type { SecretBox } from '../../platform/crypto/secret-box.js';
import type { AgentEngine } from '../../platform/llm/agent-engine.js';
import type { TenantRef } from '../route-kit/tenant-scope.js';
import type { Database } from '../../platform/store/schema.js';
import { QuickJsCodeRunner } from '../../features/recipes/code-sandbox/quickjs-code-runner.js';
import { platformServices } from '../../features/recipes/platform-services.js';
import type { RuntimeServices } from '../../features/recipes/runtime/services.js';
import { RecordingWebhooks } from '../../features/recipes/simulator/simulation-services.js';
import { SimulationSessions, type SimulationSessionsOptions } from '../../features/recipes/simulator/simulation-sessions.js';

/** What the control API needs to serve `/v1/tenants/{clientId}/simulations`. */
export interface SimulationRuntime {
  readonly sessions: SimulationSessions;
  readonly services: (tenant: TenantRef) => Promise<RuntimeServices>;
  /** Ends open sessions and stops the code sandbox workers. */
  close(): Promise<void>;
}

export interface SimulationRuntimeDeps {
  readonly db: Kysely<Database>;
  readonly box: SecretBox;
  readonly logger: Logger;
  readonly engineFor?: (tenantId: string) => AgentEngine | Promise<AgentEngine>;
  readonly sessions?: SimulationSessionsOptions;
}

/**
 * Sessions plus the tenant's platform services, with webhooks recorded instead of sent: a test
 * chat in the dashboard must not notify the tenant's CRM. The code sandbox starts its worker on
 * the first Code block, so an idle control API holds no thread.
 */
export function createSimulationRuntime(deps: SimulationRuntimeDeps): SimulationRuntime {
  const code = new QuickJsCodeRunner({ workers: 1 });
  const sessions = new SimulationSessions(deps.sessions);
  const services = platformServices({ db: deps.db, box: deps.box, code, logger: deps.logger, webhooks: new RecordingWebhooks(), ...(deps.engineFor ? { engineFor: deps.engineFor } : {}) });
  return {
    sessions,
    services: (tenant) => services(tenant.id),
    close: async () => {
      await sessions.closeAll();
      await code.close();
    },
  };
}
