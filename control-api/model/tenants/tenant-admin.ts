import type { Kysely } from 'kysely';
import type { TenantSpec, TenantUpdate } from '../domain/tenant.js';
import type { Page, PageResult, StoredResource } from '../resources/resource-definition.js';
import type { Database } from '../../platform/store/schema.js';

/**
 * What the management API and `apply` need of tenant persistence. Tenants are not tenant-scoped,
 * so they do not fit `ResourceRepository`; this is the same shape without the tenant argument.
 */
export interface TenantAdmin {
  list(db: Kysely<Database>, page: Page): Promise<PageResult<StoredResource<TenantSpec>>>;
  findByClientId(db: Kysely<Database>, clientId: string): Promise<StoredResource<TenantSpec> | undefined>;
  create(db: Kysely<Database>, spec: TenantSpec): Promise<StoredResource<TenantSpec>>;
  /**
   * A secret left out or sent masked keeps its stored value; `clear` names fields a merge patch set
   * to null (`settings.webhookSecret`, or a parent such as `settings.llm`): secrets under them go.
   */
  update(db: Kysely<Database>, id: string, spec: TenantUpdate, clear?: readonly string[]): Promise<StoredResource<TenantSpec>>;
  delete(db: Kysely<Database>, id: string): Promise<void>;
  isUnchanged(db: Kysely<Database>, stored: StoredResource<TenantSpec>, spec: TenantSpec): Promise<boolean>;
}
