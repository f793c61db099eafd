import { sql, type Kysely } from 'kysely';

/**
 * Calls placed from a browser (web calls over SIP/WebSocket) are recorded with direction `web`.
 * The check constraint of 0300 names the directions, so it is replaced by one that adds it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table calls drop constraint calls_direction_check`.execute(db);
  await sql`alter table calls add constraint calls_direction_check check (direction in ('inbound', 'outbound', 'simulation', 'web'))`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table calls drop constraint calls_direction_check`.execute(db);
  await sql`alter table calls add constraint calls_direction_check check (direction in ('inbound', 'outbound', 'simulation'))`.execute(db);
}
