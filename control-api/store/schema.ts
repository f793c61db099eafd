import type { ColumnType, Generated } from 'kysely';

/** Row types as Kysely sees them. One interface per table; `Database` lists them all. */

export type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
export type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

export interface TenantsTable {
  id: Generated<string>;
  client_id: string;
  name: string;
  timezone: Generated<string>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface ApiTokensTable {
  id: Generated<string>;
  tenant_id: string;
  name: string;
  token_hash: string;
  token_prefix: string;
  scopes: string[];
  expires_at: NullableTimestamp;
  revoked_at: NullableTimestamp;
  last_used_at: NullableTimestamp;
  created_at: Generated<Date>;
}

export interface Database {
  tenants: TenantsTable;
  api_tokens: ApiTokensTable;
}
