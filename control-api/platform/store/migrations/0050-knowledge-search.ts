import { sql, type Kysely } from 'kysely';

/**
 * GIN index for AnswerFlow's document pre-filter (recipes/knowledge/pg-knowledge-search.ts); the
 * expression must stay identical to the query's for the planner to use it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index knowledge_documents_fts_idx on knowledge_documents
    using gin (to_tsvector('simple', coalesce(spec->>'title', '') || ' ' || (spec->>'content')))`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists knowledge_documents_fts_idx`.execute(db);
}
