import type { PlatformConfig, RoleName } from '../../core/config/schema.js';
import type { Logger } from '../../core/logger.js';
import type { DrainControl } from '../../control-api/api/management/admin-drain.js';
import type { Store } from '../../control-api/platform/store/database.js';
import type { LocalSecrets } from '../local-secrets.js';
import type { ReadinessCheck } from '../../control-api/platform/http/ops-routes.js';

/** Everything a role needs from the composition root. */
export interface PlatformContext {
  readonly config: PlatformConfig;
  readonly logger: Logger;
  readonly store: Store;
  readonly secrets: LocalSecrets;
  /** True once shutdown has begun: readiness turns false so load balancers stop sending work. */
  isDraining(): boolean;
  /** /readyz checks every HTTP app adds: `startup` fails until every role has started. */
  readonly readinessChecks: Readonly<Record<string, ReadinessCheck>>;
  /** The process's drain (SIGTERM, SIGINT or POST /v1/admin/drain start it). */
  readonly drain: DrainControl;
  /** A role that carries calls reports how many (the drain status shows their sum). */
  countLiveCalls(source: () => number): void;
}

export interface RunningRole {
  readonly name: RoleName;
  /**
   * Stops taking new work but lets what is in flight run on, up to `timeoutMs` (calls: the drain
   * timeout); resolves when nothing is left. Runs for every role at once before any `stop`.
   */
  drain?(timeoutMs: number): Promise<void>;
  /** Stops taking new work and finishes or hands back what is in flight within `graceMs`. */
  stop(graceMs: number): Promise<void>;
}

export type RoleStarter = (ctx: PlatformContext) => Promise<RunningRole>;
