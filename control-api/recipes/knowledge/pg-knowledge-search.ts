import { sql, type Kysely } from 'kysely';
import type { Database } from '../../store/schema.js';
import type { KnowledgePassage, KnowledgeSearch } from '../runtime/services.js';

/**
 * AnswerFlow retrieval with PostgreSQL full-text search (works the same on PGlite). Documents
 * are pre-filtered with the GIN-indexed `simple` vector (language-neutral, so Hindi, Arabic and
 * code-switched text match word for word), then split into paragraphs ranked with both the
 * `english` (stemmed) and `simple` configurations. Query words are OR-ed: a spoken question
 * rarely contains every word of the passage that answers it.
 */
const maxQueryWords = 16;

// The `simple` configuration keeps every word, so English function words would match every
// paragraph; they are dropped here (the `english` configuration drops them by itself).
const functionWords = new Set(
  ('a an the is are was were be been am do does did of to in on at by for from with about as into and or but if then so ' +
    'what when where who whom which why how can could should would will shall may might must i me my we our you your he she ' +
    'it its they them their this that these those there here not no yes please tell much many any some').split(' '),
);

export function orQuery(text: string): string | undefined {
  const words = [...new Set(text.normalize('NFKC').toLowerCase().match(/[\p{L}\p{M}\p{N}]+/gu) ?? [])]
    .filter((w) => w.length > 1 && !functionWords.has(w))
    .slice(0, maxQueryWords);
  return words.length > 0 ? words.join(' | ') : undefined;
}

export class PgKnowledgeSearch implements KnowledgeSearch {
  constructor(private readonly db: Kysely<Database>) {}

  async search(tenantId: string, query: string, tags: readonly string[], limit: number): Promise<readonly KnowledgePassage[]> {
    const terms = orQuery(query);
    if (!terms) return [];
    const tagFilter = tags.length > 0 ? sql`and d.tags && ${sql.val([...tags])}::text[]` : sql``;
    const result = await sql<{ id: string; title: string; text: string; rank: number }>`
      with q as (select to_tsquery('simple', ${terms}) as simple_q, to_tsquery('english', ${terms}) as english_q),
      docs as (
        select d.id, coalesce(d.spec->>'title', d.name) as title, d.spec->>'content' as content
        from knowledge_documents d, q
        where d.tenant_id = ${tenantId}::uuid ${tagFilter}
          and to_tsvector('simple', coalesce(d.spec->>'title', '') || ' ' || (d.spec->>'content')) @@ q.simple_q
      ),
      paragraphs as (
        select docs.id, docs.title, trim(p) as text
        from docs, regexp_split_to_table(docs.content, E'\\n\\s*\\n') as p
        where length(trim(p)) > 0
      )
      select paragraphs.id, paragraphs.title, paragraphs.text,
             (ts_rank_cd(to_tsvector('english', paragraphs.text), q.english_q) + ts_rank_cd(to_tsvector('simple', paragraphs.text), q.simple_q))::float8 as rank
      from paragraphs, q
      where to_tsvector('english', paragraphs.text) @@ q.english_q or to_tsvector('simple', paragraphs.text) @@ q.simple_q
      order by rank desc, length(paragraphs.text) asc
      limit ${Math.max(1, Math.min(limit, 20))}
    `.execute(this.db);
    return result.rows.map((row) => ({ documentId: row.id, title: row.title, text: row.text, rank: Number(row.rank) }));
  }
}
