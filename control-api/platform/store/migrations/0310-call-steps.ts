import { sql, type Kysely } from 'kysely';

/**
 * The path a recipe took on a call (RunStep list: blocks visited, the exit each left by, its
 * reprompts and "did you say ...?" confirmations). Beside the transcript rather than on `calls`:
 * like the transcript it is read only for one call, never by the list or the report.
 * Calls recorded before this migration have no path: '[]'.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('call_transcripts')
    .addColumn('steps', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('call_transcripts').dropColumn('steps').execute();
}
