/**
 * The call list's queries at 1,000,000 stored calls (issue 29): newest first, by duration both
 * ways, deep pages forwards and back, and each filter the dashboard offers.
 *
 * Stores N calls for one tenant (plus 10% as many for a second tenant, so the tenant column
 * filters something) in a private PostgreSQL cluster (or --url), analyses the table, then runs
 * each list query `--runs` times through `listCallsSorted` (the route's own code) and prints the
 * median and worst time, the rows returned, and whether EXPLAIN ANALYZE shows an index scan and
 * no sort or sequential scan. `--explain` prints each plan.
 *
 *   node --import tsx bench/call-list.ts [--calls 1000000] [--runs 9] [--url postgres://...] [--explain]
 */
import { performance } from 'node:perf_hooks';
import { CompiledQuery, sql, type Kysely } from 'kysely';
import { callListQuery, listCallsSorted, type ListCursor, type ListPage } from '../control-api/features/calls/call-list.js';
import type { CallFilter } from '../control-api/features/calls/call-repository.js';
import { createSecretBox } from '../control-api/platform/crypto/secret-box.js';
import { openStore } from '../control-api/platform/store/database.js';
import { migrateToLatest } from '../control-api/platform/store/migrate.js';
import type { Database } from '../control-api/platform/store/schema.js';
import { createTenantsRepository } from '../control-api/model/tenants/tenants-repository.js';
import { startPostgresCluster, type PostgresCluster } from '../test/helpers/postgres-cluster.js';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}

const total = Number(arg('calls', '1000000'));
const runs = Number(arg('runs', '9'));
const explain = process.argv.includes('--explain');
const chunk = 100_000;

/** Fills `count` calls for a tenant, one every 30 s from 2025-01-01, with a realistic spread of values. */
async function fill(db: Kysely<Database>, tenantId: string, count: number): Promise<void> {
  for (let from = 1; from <= count; from += chunk) {
    const to = Math.min(count, from + chunk - 1);
    // Directions 70% outbound, 25% inbound, 5% web; 1 in 10 not answered (no duration); 1 in
    // 2,000 transferred; 1 in 500 left a voicemail; 2,000 contacts called again and again.
    await sql`
      insert into calls (tenant_id, direction, phone_number, remote_number, started_at, answered_at, ended_at, status, outcome,
                         sip_status, duration_ms, end_reason, disposition, variables, analysis_status)
      select ${tenantId}::uuid,
             case when g % 20 < 14 then 'outbound' when g % 20 < 19 then 'inbound' else 'web' end,
             '+91800000000' || (g % 3),
             '+9198' || lpad((g % 200000)::text, 8, '0'),
             timestamptz '2025-01-01 00:00:00+00' + g * interval '30 seconds',
             case when g % 10 = 0 then null else timestamptz '2025-01-01 00:00:04+00' + g * interval '30 seconds' end,
             timestamptz '2025-01-01 00:00:04+00' + g * interval '30 seconds' + ((g::bigint * 7919) % 600000) * interval '1 millisecond',
             'ended',
             case when g % 10 = 0 then 'no_answer' else 'completed' end,
             case when g % 10 = 0 then 480 else 200 end,
             case when g % 10 = 0 then 0 else ((g::bigint * 7919) % 600000)::int end,
             case when g % 2000 = 7 then 'transferred' when g % 10 = 0 then null when g % 3 = 0 then 'callerHangup' else 'closed' end,
             case when g % 500 = 3 then 'voicemail_message_left' when g % 10 = 0 then null when g % 4 = 0 then 'callback' else 'promise_to_pay' end,
             jsonb_build_object('order_number', g::text),
             case when g % 10 = 0 then 'skipped' else 'completed' end
      from generate_series(${from}::int, ${to}::int) g`.execute(db);
    process.stdout.write(`  ${to} calls\n`);
  }
}

interface Case {
  readonly name: string;
  readonly filter: CallFilter;
  readonly page: ListPage;
}

async function plan(db: Kysely<Database>, tenantId: string, c: Case): Promise<string> {
  const compiled = callListQuery(db, tenantId, c.filter, c.page).compile();
  const result = await db.executeQuery<{ 'QUERY PLAN': string }>(CompiledQuery.raw(`explain (analyze, buffers) ${compiled.sql}`, [...compiled.parameters]));
  return result.rows.map((r) => r['QUERY PLAN']).join('\n');
}

function verdict(text: string): string {
  const scans = [...new Set([...text.matchAll(/(Index Only Scan|Index Scan|Bitmap Index Scan)(?: Backward)? (?:using|on) (\w+)/g)].map((m) => m[2]))];
  const seq = /Seq Scan/.test(text) ? ' SEQ SCAN' : '';
  const sort = /\bSort\b/.test(text) ? ' +sort' : '';
  return `${scans.join('+') || 'no index'}${seq}${sort}`;
}

let cluster: PostgresCluster | undefined;
let url = arg('url', '');
if (!url) {
  process.stdout.write('starting a private PostgreSQL cluster...\n');
  cluster = await startPostgresCluster();
  url = await cluster.createDatabase('call_list_bench');
}
const store = await openStore({ url, poolSize: 2 });
try {
  await migrateToLatest(store.db);
  const tenants = createTenantsRepository(createSecretBox(Buffer.alloc(32, 3)));
  const tenant = await tenants.create(store.db, { clientId: 'bench', name: 'Bench', timezone: 'Asia/Kolkata', settings: { ssrfAllowlist: [] } });
  const other = await tenants.create(store.db, { clientId: 'other', name: 'Other', timezone: 'UTC', settings: { ssrfAllowlist: [] } });
  const loadStarted = performance.now();
  process.stdout.write(`storing ${total} calls...\n`);
  await fill(store.db, tenant.id, total);
  await fill(store.db, other.id, Math.round(total / 10));
  await sql`analyze calls`.execute(store.db);
  process.stdout.write(`stored and analysed in ${((performance.now() - loadStarted) / 1000).toFixed(0)} s\n\n`);

  // Deep cursors: the middle of the tenant's history, in each sort.
  const middle = await store.db.selectFrom('calls').select(['id', 'started_at', 'duration_ms']).where('tenant_id', '=', tenant.id).orderBy('started_at').orderBy('id').offset(Math.floor(total / 2)).limit(1).executeTakeFirstOrThrow();
  const at = (sort: 'startedAt' | 'duration', order: 'asc' | 'desc', direction: 'next' | 'prev'): ListCursor => ({
    sort,
    order,
    direction,
    key: sort === 'duration' ? (middle.duration_ms ?? -1) : middle.started_at.toISOString(),
    id: middle.id,
  });
  const newest = { sort: 'startedAt', order: 'desc', limit: 50 } as const;
  const cases: Case[] = [
    { name: 'newest first, first page', filter: {}, page: newest },
    { name: 'newest first, page at 500k (next)', filter: {}, page: { ...newest, cursor: at('startedAt', 'desc', 'next') } },
    { name: 'newest first, page at 500k (prev)', filter: {}, page: { ...newest, cursor: at('startedAt', 'desc', 'prev') } },
    { name: 'oldest first, first page', filter: {}, page: { ...newest, order: 'asc' } },
    { name: 'longest first, first page', filter: {}, page: { sort: 'duration', order: 'desc', limit: 50 } },
    { name: 'longest first, page at 500k (next)', filter: {}, page: { sort: 'duration', order: 'desc', limit: 50, cursor: at('duration', 'desc', 'next') } },
    { name: 'shortest first, page at 500k (prev)', filter: {}, page: { sort: 'duration', order: 'asc', limit: 50, cursor: at('duration', 'asc', 'prev') } },
    { name: 'number (a contact, 5 calls)', filter: { number: '+919800001234' }, page: newest },
    { name: 'number (the platform\'s, 1/3 of calls)', filter: { number: '+918000000001' }, page: newest },
    { name: 'direction web (5%)', filter: { direction: ['web'] }, page: newest },
    { name: 'disposition voicemail (0.2%)', filter: { disposition: ['voicemail_message_left'] }, page: newest },
    { name: 'end reason transferred (0.05%)', filter: { endReason: ['transferred'] }, page: newest },
    { name: 'one day (2025-03-01)', filter: { from: new Date('2025-03-01T00:00:00Z'), to: new Date('2025-03-02T00:00:00Z') }, page: newest },
    { name: 'one day, longest first', filter: { from: new Date('2025-03-01T00:00:00Z'), to: new Date('2025-03-02T00:00:00Z') }, page: { sort: 'duration', order: 'desc', limit: 50 } },
    { name: 'outbound + completed, page at 500k', filter: { direction: ['outbound'], outcome: ['completed'] }, page: { ...newest, cursor: at('startedAt', 'desc', 'next') } },
  ];
  process.stdout.write(`${'query'.padEnd(40)} ${'median'.padStart(9)} ${'worst'.padStart(9)} ${'rows'.padStart(5)}  plan\n`);
  for (const c of cases) {
    const times: number[] = [];
    let rows = 0;
    for (let i = 0; i < runs; i++) {
      const started = performance.now();
      rows = (await listCallsSorted(store.db, tenant.id, c.filter, c.page)).items.length;
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    const text = await plan(store.db, tenant.id, c);
    const median = times[Math.floor(times.length / 2)] ?? 0;
    const worst = times[times.length - 1] ?? 0;
    process.stdout.write(`${c.name.padEnd(40)} ${median.toFixed(2).padStart(6)} ms ${worst.toFixed(2).padStart(6)} ms ${String(rows).padStart(5)}  ${verdict(text)}\n`);
    if (explain) process.stdout.write(`${text}\n\n`);
  }
} finally {
  await store.close();
  await cluster?.stop();
}
