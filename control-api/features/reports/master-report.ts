import { Readable } from 'node:stream';
import { sql, type Kysely } from 'kysely';
import { filteredCalls, type CallCursor, type CallFilter } from '../calls/call-repository.js';
import { insightParameterListSchema } from '../../model/domain/insight-parameter.js';
import type { Database } from '../../platform/store/schema.js';
import { encodeCsvBatch, type CsvOptions } from './csv-encoder.js';

/**
 * The Master Report: one row per call, fixed call columns, then one `analysis.<name>` column per
 * insight parameter (spec: Post-call analysis outputs). Streamed: the database is read in
 * keyset batches only as fast as the client takes bytes, so memory stays flat at any row count.
 */
export const fixedColumns = [
  'call_id',
  'sip_call_id',
  'direction',
  'started_at',
  'answered_at',
  'ended_at',
  'duration_seconds',
  'phone_number',
  'contact_number',
  'campaign_id',
  'campaign_name',
  'message_id',
  'attempt',
  'outcome',
  'sip_status',
  'end_reason',
  'disposition',
  'amd_verdict',
  'amd_ms',
  'analysis_status',
  'analysis_error',
  'variables',
] as const;

export interface ReportScope {
  readonly tenantId: string;
  readonly filter: CallFilter;
}

/**
 * The insight parameter names that become columns: the filtered campaign's recipe's, otherwise
 * the union over the tenant's recipes (ordered by recipe name, first occurrence wins). A call
 * whose recipe lacks a parameter has an empty cell there.
 */
export async function insightColumns(db: Kysely<Database>, scope: ReportScope): Promise<string[]> {
  let query = db.selectFrom('recipes').select(['recipes.spec']).where('recipes.tenant_id', '=', scope.tenantId).orderBy('recipes.name');
  if (scope.filter.campaignId) {
    query = query.innerJoin('campaigns', (join) => join.onRef('campaigns.recipe_id', '=', 'recipes.id').onRef('campaigns.tenant_id', '=', 'recipes.tenant_id')).where('campaigns.id', '=', scope.filter.campaignId);
  }
  const names: string[] = [];
  for (const row of await query.execute()) {
    const insights = (row.spec as { globalSettings?: { insights?: unknown } } | null)?.globalSettings?.insights;
    const parsed = insightParameterListSchema.safeParse(insights ?? []);
    if (!parsed.success) continue;
    for (const p of parsed.data) if (!names.includes(p.name)) names.push(p.name);
  }
  return names;
}

const iso = (d: Date | null): string => (d ? d.toISOString() : '');

/**
 * Report rows in batches of `batchSize` calls, header first. Insight values are read as text in
 * SQL (`insights ->> name`, which prints `true`/`2500`/dates exactly as the webhook shows them)
 * and variables as jsonb text, so no JSON is parsed and re-serialised per row in Node.
 */
export async function* reportBatches(db: Kysely<Database>, scope: ReportScope, parameters: readonly string[], batchSize = 2_000): AsyncGenerator<string[][]> {
  const campaigns = new Map(
    (await db.selectFrom('campaigns').select(['id', 'name']).where('tenant_id', '=', scope.tenantId).execute()).map((c) => [c.id, c.name] as const),
  );
  yield [[...fixedColumns, ...parameters.map((p) => `analysis.${p}`)]];
  let after: CallCursor | undefined;
  for (;;) {
    const rows = await filteredCalls(db, scope.tenantId, scope.filter, after)
      .select([
        'calls.id',
        'calls.sip_call_id',
        'calls.direction',
        'calls.started_at',
        'calls.answered_at',
        'calls.ended_at',
        'calls.duration_ms',
        'calls.phone_number',
        'calls.remote_number',
        'calls.campaign_id',
        'calls.message_id',
        'calls.attempt',
        'calls.outcome',
        'calls.sip_status',
        'calls.end_reason',
        'calls.disposition',
        'calls.amd_verdict',
        'calls.amd_ms',
        'calls.analysis_status',
        'calls.analysis_error',
        sql<string>`calls.variables::text`.as('variables_text'),
        ...parameters.map((p, i) => sql<string | null>`calls.insights ->> ${p}`.as(`insight_${i}`)),
      ])
      .limit(batchSize)
      .execute();
    const batch = rows.map((row) => {
      const r = row as typeof row & Record<string, string | null>;
      return [
        r.id,
        r.sip_call_id ?? '',
        r.direction,
        iso(r.started_at),
        iso(r.answered_at),
        iso(r.ended_at),
        r.duration_ms === null ? '' : String(Math.round(r.duration_ms / 1000)),
        r.phone_number ?? '',
        r.remote_number ?? '',
        r.campaign_id ?? '',
        (r.campaign_id && campaigns.get(r.campaign_id)) ?? '',
        r.message_id ?? '',
        r.attempt === null ? '' : String(r.attempt),
        r.outcome ?? '',
        r.sip_status === null ? '' : String(r.sip_status),
        r.end_reason ?? '',
        r.disposition ?? '',
        r.amd_verdict ?? '',
        r.amd_ms === null ? '' : String(r.amd_ms),
        r.analysis_status,
        r.analysis_error ?? '',
        r.variables_text === '{}' ? '' : (r.variables_text ?? ''),
        ...parameters.map((_, i) => r[`insight_${i}`] ?? ''),
      ];
    });
    if (batch.length > 0) yield batch;
    const last = rows[rows.length - 1];
    if (!last || rows.length < batchSize) return;
    after = { startedAt: last.started_at, id: last.id };
  }
}

/**
 * The report as a byte stream of CSV. Back-pressure flows from the consumer to the batch
 * generator: the next batch is read only when the previous one has been taken, and destroying
 * the result (client gone) ends the reads.
 */
export async function masterReportCsv(db: Kysely<Database>, scope: ReportScope, options: CsvOptions & { batchSize?: number } = {}): Promise<Readable> {
  await freshStatistics(db);
  const parameters = await insightColumns(db, scope);
  async function* encoded(): AsyncGenerator<Buffer> {
    let first = true;
    for await (const batch of reportBatches(db, scope, parameters, options.batchSize)) {
      yield Buffer.from(encodeCsvBatch(batch, options, first), 'utf8');
      first = false;
    }
  }
  return Readable.from(encoded(), { objectMode: false });
}

/**
 * Keyset pages are cheap only when the planner walks the (tenant_id, started_at, id) index; with
 * no statistics it may bitmap-scan and sort everything after the cursor on every page, which
 * makes an export quadratic. PostgreSQL's autovacuum keeps statistics fresh eventually, embedded
 * PGlite never does, so a stale table is analysed (a sample, well under a second) first.
 */
export async function freshStatistics(db: Kysely<Database>): Promise<void> {
  const stats = await sql<{ live: string | number | bigint; modified: string | number | bigint }>`
    select n_live_tup as live, n_mod_since_analyze as modified from pg_stat_user_tables where relname = 'calls'`.execute(db);
  const row = stats.rows[0];
  if (!row) return;
  const modified = Number(row.modified);
  if (modified > Math.max(10_000, Number(row.live) * 0.2)) await sql`analyze calls`.execute(db);
}
