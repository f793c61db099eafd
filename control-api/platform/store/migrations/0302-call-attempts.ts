import { sql, type Kysely } from 'kysely';

/**
 * Campaign call records carry their attempt number, and a campaign attempt has at most one
 * record: the scheduler writes the record of an attempt that never connected in the transaction
 * that settles its outcome, the gateway the record of an answered one, and the unique index
 * makes a repeated settlement (or the two racing) unable to list the attempt twice.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE calls ADD COLUMN attempt integer`.execute(db);
  await sql`CREATE UNIQUE INDEX calls_message_attempt_key ON calls (message_id, attempt) WHERE attempt IS NOT NULL`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX calls_message_attempt_key`.execute(db);
  await sql`ALTER TABLE calls DROP COLUMN attempt`.execute(db);
}
