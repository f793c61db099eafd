import { sql, type Kysely } from 'kysely';

/**
 * The answering-machine verdict of an outbound call (media/voice: screenForVoicemail) and how
 * much of the callee's audio it took. Null on calls that were not screened (inbound,
 * simulations, dials that never connected).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('calls')
    .addColumn('amd_verdict', 'text', (c) => c.check(sql`amd_verdict in ('human', 'machine', 'unknown')`))
    .addColumn('amd_ms', 'integer', (c) => c.check(sql`amd_ms >= 0`))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('calls').dropColumn('amd_ms').dropColumn('amd_verdict').execute();
}
