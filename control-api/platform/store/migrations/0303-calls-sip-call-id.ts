import { sql, type Kysely } from 'kysely';

/**
 * The SIP Call-ID of a call's dialog (inbound: the caller's INVITE; outbound: ours), so a call
 * found in the API or the Master Report can be found in a SIP trace or a carrier's CDR, and back.
 * Null for simulations and for records written before this column.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('calls').addColumn('sip_call_id', 'text').execute();
  await sql`CREATE INDEX calls_sip_call_id_idx ON calls (sip_call_id) WHERE sip_call_id IS NOT NULL`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX calls_sip_call_id_idx`.execute(db);
  await db.schema.alterTable('calls').dropColumn('sip_call_id').execute();
}
