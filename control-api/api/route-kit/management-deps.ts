import type { Kysely } from 'kysely';
import type { Logger } from '../../../core/logger.js';
import type { ResourceDefinition } from '../../model/resources/resource-definition.js';
import type { Database } from '../../platform/store/schema.js';

export interface ManagementDeps {
  readonly db: Kysely<Database>;
  readonly logger: Logger;
  /** The operator credential: reaches every tenant and is the only one that may create tenants. */
  readonly operatorToken: string;
  /** Every tenant-scoped resource kind; each is served by the same generic routes. */
  readonly definitions: readonly ResourceDefinition[];
  readonly bodyLimitBytes: number;
}
