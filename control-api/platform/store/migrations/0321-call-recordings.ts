import { sql, type Kysely } from 'kysely';

/**
 * Call recordings kept in the database (`recordings.store: database`, docs/edge.md), so that every
 * platform node behind an edge serves every call's recording. A recording is a row in
 * `call_recordings` (written last, in the same transaction as its chunks: a recording that is
 * listed is complete) and its bytes in fixed-size `call_recording_chunks`, so a Range request reads
 * only the chunks it covers. `ref` is the call's `recording_ref`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('call_recordings')
    .addColumn('ref', 'text', (c) => c.primaryKey())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('chunk_bytes', 'integer', (c) => c.notNull().check(sql`chunk_bytes > 0`))
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('stored_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createTable('call_recording_chunks')
    .addColumn('ref', 'text', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('data', 'bytea', (c) => c.notNull())
    .addPrimaryKeyConstraint('call_recording_chunks_pkey', ['ref', 'seq'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('call_recording_chunks').execute();
  await db.schema.dropTable('call_recordings').execute();
}
