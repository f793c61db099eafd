import type { PlatformConfig, RoleName } from '../../core/config/schema.js';
import type { Logger } from '../../core/logger.js';
import type { Store } from '../../control-api/store/database.js';
import type { LocalSecrets } from '../local-secrets.js';

/** Everything a role needs from the composition root. */
export interface PlatformContext {
  readonly config: PlatformConfig;
  readonly logger: Logger;
  readonly store: Store;
  readonly secrets: LocalSecrets;
  /** True once shutdown has begun: readiness turns false so load balancers stop sending work. */
  isDraining(): boolean;
}

export interface RunningRole {
  readonly name: RoleName;
  /** Stops taking new work and finishes or hands back what is in flight within `graceMs`. */
  stop(graceMs: number): Promise<void>;
}

export type RoleStarter = (ctx: PlatformContext) => Promise<RunningRole>;
