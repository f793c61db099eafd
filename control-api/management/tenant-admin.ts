import type { Kysely } from 'kysely';
import type { TenantSpec, TenantUpdate } from '../domain/tenant.js';
import type { Page, PageResult, StoredResource } from '../resources/resource-definition.js';
import type { Database } from '../store/schema.js';

/**
 * What the management API and `apply` need of tenant persistence. Tenants are not tenant-scoped,
 * so they do not fit `ResourceRepository`; this is the same shape without the tenant argument.
 */
export interface TenantAdmin {
  list(db: Kysely<Database>, page: Page): Promise<PageResult<StoredResource<TenantSpec>>>;
  findByClientId(db: Kysely<Database>, clientId: string): Promise<StoredResource<TenantSpec> | undefined>;
  create(db: Kysely<Database>, spec: TenantSpec): Promise<StoredResource<TenantSpec>>;
  update(db: Kysely<Database>, id: string, spec: TenantUpdate): Promise<StoredResource<TenantSpec>>;
  delete(db: Kysely<Database>, id: string): Promise<void>;
  isUnchanged(db: Kysely<Database>, stored: StoredResource<TenantSpec>, spec: TenantSpec): Promise<boolean>;
}
