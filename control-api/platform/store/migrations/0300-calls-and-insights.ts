import { sql, type Kysely } from 'kysely';

/**
 * Call records, their transcripts and the durable post-call analysis queue.
 *
 * `calls` stays narrow (no transcript) because the Master Report streams it by the million; the
 * transcript lives in `call_transcripts`, read only for one call or by the analysis job.
 * References to numbers, campaigns and recipes are plain uuids, not foreign keys: a call record is
 * history and must survive the configuration it ran under being deleted.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('calls')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('tenant_id', 'uuid', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('direction', 'text', (c) => c.notNull().check(sql`direction in ('inbound', 'outbound', 'simulation')`))
    .addColumn('phone_number_id', 'uuid')
    .addColumn('phone_number', 'text')
    .addColumn('remote_number', 'text')
    .addColumn('campaign_id', 'uuid')
    .addColumn('message_id', 'uuid')
    .addColumn('recipe_id', 'uuid')
    .addColumn('language', 'text')
    .addColumn('started_at', 'timestamptz', (c) => c.notNull())
    .addColumn('answered_at', 'timestamptz')
    .addColumn('ended_at', 'timestamptz')
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('in_progress', 'ended')`))
    .addColumn('outcome', 'text')
    .addColumn('sip_status', 'integer')
    .addColumn('duration_ms', 'integer')
    .addColumn('end_reason', 'text')
    .addColumn('disposition', 'text')
    .addColumn('variables', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('recording_ref', 'text')
    .addColumn('analysis_status', 'text', (c) =>
      c.notNull().check(sql`analysis_status in ('pending', 'analyzing', 'completed', 'failed', 'skipped')`),
    )
    .addColumn('analysis_error', 'text')
    .addColumn('analysis_completed_at', 'timestamptz')
    .addColumn('insights', 'jsonb')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  // Keyset order of lists and the report: (started_at, id) inside a tenant.
  await db.schema.createIndex('calls_tenant_started_idx').on('calls').columns(['tenant_id', 'started_at', 'id']).execute();
  await db.schema.createIndex('calls_tenant_campaign_idx').on('calls').columns(['tenant_id', 'campaign_id', 'started_at']).execute();
  await db.schema.createIndex('calls_message_idx').on('calls').column('message_id').execute();

  await db.schema
    .createTable('call_transcripts')
    .addColumn('call_id', 'uuid', (c) => c.primaryKey().references('calls.id').onDelete('cascade'))
    .addColumn('entries', 'jsonb', (c) => c.notNull())
    .execute();

  // One row per job: kind 'extract' (LLM extraction) then 'deliver' (analysis_success webhook).
  await db.schema
    .createTable('analysis_jobs')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('call_id', 'uuid', (c) => c.notNull().references('calls.id').onDelete('cascade'))
    .addColumn('tenant_id', 'uuid', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('extract', 'deliver')`))
    .addColumn('state', 'text', (c) => c.notNull().check(sql`state in ('pending', 'running', 'done', 'failed', 'skipped')`))
    .addColumn('payload', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('run_at', 'timestamptz', (c) => c.notNull())
    .addColumn('deadline_at', 'timestamptz', (c) => c.notNull())
    .addColumn('locked_by', 'text')
    .addColumn('lease_until', 'timestamptz')
    .addColumn('last_error', 'text')
    .addColumn('last_status', 'integer')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('finished_at', 'timestamptz')
    .addUniqueConstraint('analysis_jobs_call_kind_key', ['call_id', 'kind'])
    .execute();
  // Only open jobs are indexed: the claim query never looks at finished ones.
  await sql`create index analysis_jobs_due_idx on analysis_jobs (run_at) where state in ('pending', 'running')`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('analysis_jobs').execute();
  await db.schema.dropTable('call_transcripts').execute();
  await db.schema.dropTable('calls').execute();
}
