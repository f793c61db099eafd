import { sql, type Kysely } from 'kysely';

/**
 * Attempts gain a first status, `claimed` (taken by a worker, INVITE not sent yet), before
 * `dialing` (recorded right before the INVITE leaves). A claimed attempt is as active as a
 * dialing one for the concurrency limits and lease recovery, so the partial indexes those
 * queries use cover it too.
 */
const active = `('claimed', 'dialing', 'ringing', 'answered')`;
const previous = `('dialing', 'ringing', 'answered')`;

async function rebuild(db: Kysely<unknown>, statuses: string): Promise<void> {
  await sql`DROP INDEX campaign_attempts_active_campaign_idx`.execute(db);
  await sql`DROP INDEX campaign_attempts_active_from_idx`.execute(db);
  await sql`DROP INDEX campaign_attempts_lease_idx`.execute(db);
  await sql`CREATE INDEX campaign_attempts_active_campaign_idx ON campaign_attempts (campaign_id) WHERE status IN ${sql.raw(statuses)}`.execute(db);
  await sql`CREATE INDEX campaign_attempts_active_from_idx ON campaign_attempts (from_e164) WHERE status IN ${sql.raw(statuses)}`.execute(db);
  await sql`CREATE INDEX campaign_attempts_lease_idx ON campaign_attempts (lease_until) WHERE status IN ${sql.raw(statuses)}`.execute(db);
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await rebuild(db, active);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await rebuild(db, previous);
}
