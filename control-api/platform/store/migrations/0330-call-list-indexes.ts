import { sql, type Kysely } from 'kysely';

/**
 * Indexes for the call list's sorts and filters (control-api/features/calls/call-list.ts), so a page of a
 * tenant with a million calls reads about `limit` index entries (bench/call-list.ts):
 * - duration sort: (tenant_id, coalesce(duration_ms, -1), id), the expression the list orders by
 *   (a call in progress has no duration and sorts as -1); the time sort uses 0300's
 *   (tenant_id, started_at, id), backwards for newest first;
 * - number filter (the platform's number or the other party's): one index per column, ending in
 *   (started_at, id) so a match is read in list order; PostgreSQL ORs the two;
 * - disposition and end reason filters: rare values (a `transferred`, a `voicemail_message_left`)
 *   are found without walking the tenant's whole history.
 * Direction and outcome have a handful of values, each common: the time index with a filter serves them.
 */
const indexes: ReadonlyArray<readonly [string, string]> = [
  ['calls_tenant_duration_idx', '(tenant_id, (coalesce(duration_ms, -1)), id)'],
  ['calls_tenant_remote_idx', '(tenant_id, remote_number, started_at, id)'],
  ['calls_tenant_phone_idx', '(tenant_id, phone_number, started_at, id)'],
  ['calls_tenant_disposition_idx', '(tenant_id, disposition, started_at, id)'],
  ['calls_tenant_end_reason_idx', '(tenant_id, end_reason, started_at, id)'],
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const [name, columns] of indexes) await sql`CREATE INDEX ${sql.id(name)} ON calls ${sql.raw(columns)}`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const [name] of indexes) await sql`DROP INDEX ${sql.id(name)}`.execute(db);
}
