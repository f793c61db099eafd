import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../../../platform/store/schema.js';
import type { KnowledgePassage, KnowledgeSearch } from '../runtime/services.js';
import { documentPassages, type Passage } from './passages.js';

/**
 * AnswerFlow retrieval with PostgreSQL full-text search (works the same on PGlite). Documents
 * are pre-filtered with the GIN-indexed `simple` vector (language-neutral, so Hindi, Arabic and
 * code-switched text match word for word; query words as prefixes, so "refund" finds
 * "Refunds"), then cut into passages along their markdown structure (`passages.ts`: headings
 * apart, marks removed) and the passages ranked with the `english` (stemmed) configuration, plus
 * the `simple` one for words in other scripts. Query words are OR-ed: a spoken question rarely contains every word of the
 * passage that answers it.
 */
const maxQueryWords = 16;
/** Documents cut into passages per search: the best-ranked ones of the pre-filter. */
const maxCandidateDocuments = 20;
/** Passages sent to PostgreSQL for ranking per search, after the cheap word check. */
const maxCandidatePassages = 400;

// The `simple` configuration keeps every word, so English function words would match every
// paragraph; they are dropped here (the `english` configuration drops them by itself).
const functionWords = new Set(
  ('a an the is are was were be been am do does did of to in on at by for from with about as into and or but if then so ' +
    'what when where who whom which why how can could should would will shall may might must i me my we our you your he she ' +
    'it its they them their this that these those there here not no yes please tell much many any some').split(' '),
);

function contentWords(text: string): string[] {
  return [...new Set(text.normalize('NFKC').toLowerCase().match(/[\p{L}\p{M}\p{N}]+/gu) ?? [])].filter((w) => w.length > 1 && !functionWords.has(w));
}

function queryWords(text: string): string[] {
  return contentWords(text).slice(0, maxQueryWords);
}

export function orQuery(text: string): string | undefined {
  const words = queryWords(text);
  return words.length > 0 ? words.join(' | ') : undefined;
}

/** English inflections off a Latin-script word, for prefix matching ("processed" -> "process"). */
export function wordStem(word: string): string {
  if (!/^[a-z]+$/.test(word)) return word;
  const stem = word.replace(/(?:ing|ed|es|s|ly)$/, '');
  return stem.length >= 3 ? stem : word;
}

/** Documents read for a vocabulary: the most recently changed ones. */
const maxVocabularyDocuments = 200;
/** Tenant / tag combinations whose vocabulary is kept (oldest dropped first). */
const maxCachedVocabularies = 500;

interface Candidate extends Passage {
  readonly documentId: string;
  readonly title: string;
  /** Its place among its document's passages (0 = first). */
  readonly position: number;
}

export class PgKnowledgeSearch implements KnowledgeSearch {
  constructor(private readonly db: Kysely<Database>) {}

  async search(tenantId: string, query: string, tags: readonly string[], limit: number): Promise<readonly KnowledgePassage[]> {
    const words = queryWords(query);
    if (words.length === 0) return [];
    const stems = [...new Set(words.map(wordStem))];
    const candidates = (await this.documents(tenantId, stems, tags))
      .flatMap((doc) => documentPassages(doc.content).map((p, position): Candidate => ({ ...p, documentId: doc.id, title: doc.title, position })))
      .filter((p) => {
        const haystack = `${p.section} ${p.text}`.normalize('NFKC').toLowerCase();
        return stems.some((s) => haystack.includes(s));
      })
      .slice(0, maxCandidatePassages);
    if (candidates.length === 0) return [];
    // The section heading counts for the match ("## Refunds" over "We pay back in 5 days") but
    // is not part of the passage text that is spoken. English words rank by their stems only: a
    // spoken question's inflection is the recogniser's guess ("refund is" heard as "refunded"),
    // and an exact-form bonus sent "how many days until my refund is processed" to the one
    // paragraph that says "refunded". Other scripts also rank word for word (`simple`).
    const simpleTerms = words.filter((w) => !/^[a-z0-9']+$/.test(w)).join(' | ');
    const simpleRank = simpleTerms ? sql`ts_rank_cd(to_tsvector('simple', p.t), to_tsquery('simple', ${simpleTerms}))` : sql`0`;
    const simpleMatch = simpleTerms ? sql`or to_tsvector('simple', p.t) @@ to_tsquery('simple', ${simpleTerms})` : sql``;
    // Equal ranks: a document's earlier passage first (documents open with the general answer and
    // go on to the special cases), then the shorter one.
    const ranked = await sql<{ i: number; rank: number }>`
      with q as (select to_tsquery('english', ${words.join(' | ')}) as english_q),
      p as (select x.t, x.position, x.i from unnest(${sql.val(candidates.map((c) => `${c.section} ${c.text}`))}::text[], ${sql.val(candidates.map((c) => c.position))}::int[]) with ordinality as x(t, position, i))
      select p.i::int as i, (ts_rank_cd(to_tsvector('english', p.t), q.english_q) + ${simpleRank})::float8 as rank
      from p, q
      where to_tsvector('english', p.t) @@ q.english_q ${simpleMatch}
      order by rank desc, p.position asc, length(p.t) asc, p.i asc
      limit ${Math.max(1, Math.min(limit, 20))}
    `.execute(this.db);
    return ranked.rows.map((row) => {
      const c = candidates[row.i - 1]!;
      return { documentId: c.documentId, title: c.title, ...(c.section ? { section: c.section } : {}), text: c.text, rank: Number(row.rank) };
    });
  }

  /** Vocabularies by tenant and tags, kept while the library is unchanged (its newest change and size). */
  private readonly vocabularies = new Map<string, { version: string; words: readonly string[] }>();

  async vocabulary(tenantId: string, tags: readonly string[], limit: number): Promise<readonly string[]> {
    const tagFilter = tags.length > 0 ? sql`and tags && ${sql.val([...tags])}::text[]` : sql``;
    // Every SmartAI block with AnswerFlow asks at its start: a cheap check that nothing changed
    // spares reading and cutting up the documents again.
    const state = await sql<{ version: string }>`
      select coalesce(max(updated_at)::text, '') || '/' || count(*)::text as version
      from knowledge_documents where tenant_id = ${tenantId}::uuid ${tagFilter}
    `.execute(this.db);
    const key = JSON.stringify([tenantId, [...tags].sort(), limit]);
    const version = state.rows[0]?.version ?? '';
    const cached = this.vocabularies.get(key);
    if (cached?.version === version) return cached.words;
    const words = await this.readVocabulary(tenantId, tagFilter, limit);
    if (this.vocabularies.size >= maxCachedVocabularies) this.vocabularies.delete(this.vocabularies.keys().next().value as string);
    this.vocabularies.set(key, { version, words });
    return words;
  }

  private async readVocabulary(tenantId: string, tagFilter: RawBuilder<unknown>, limit: number): Promise<readonly string[]> {
    const result = await sql<{ title: string; content: string }>`
      select coalesce(spec->>'title', '') as title, coalesce(spec->>'content', '') as content
      from knowledge_documents
      where tenant_id = ${tenantId}::uuid ${tagFilter}
      order by updated_at desc, id
      limit ${maxVocabularyDocuments}
    `.execute(this.db);
    // Counted once per passage: a word that runs through many passages is what callers ask about.
    const counts = new Map<string, number>();
    for (const doc of result.rows) {
      for (const p of [{ section: doc.title, text: '' }, ...documentPassages(doc.content)]) {
        for (const w of contentWords(`${p.section ?? ''} ${p.text}`)) counts.set(w, (counts.get(w) ?? 0) + 1);
      }
    }
    return [...counts.entries()]
      .filter(([w]) => /^[a-z']+$/.test(w))
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .slice(0, Math.max(0, limit))
      .map(([w]) => w);
  }

  private async documents(tenantId: string, stems: readonly string[], tags: readonly string[]): Promise<{ id: string; title: string; content: string }[]> {
    const prefixes = stems.map((s) => `${s}:*`).join(' | ');
    const tagFilter = tags.length > 0 ? sql`and d.tags && ${sql.val([...tags])}::text[]` : sql``;
    // The vector expression must stay identical to migration 0050's GIN index.
    const result = await sql<{ id: string; title: string; content: string }>`
      with q as (select to_tsquery('simple', ${prefixes}) as simple_q)
      select d.id, coalesce(d.spec->>'title', d.name) as title, d.spec->>'content' as content
      from knowledge_documents d, q
      where d.tenant_id = ${tenantId}::uuid ${tagFilter}
        and to_tsvector('simple', coalesce(d.spec->>'title', '') || ' ' || (d.spec->>'content')) @@ q.simple_q
      order by ts_rank(to_tsvector('simple', coalesce(d.spec->>'title', '') || ' ' || (d.spec->>'content')), q.simple_q) desc, d.id
      limit ${maxCandidateDocuments}
    `.execute(this.db);
    return result.rows;
  }
}
