/**
 * Master Report export speed and memory at 1,000,000 stored calls.
 *
 * Stores N calls for one tenant (each with 10 insight values, among them text with commas,
 * quotes, newlines, Hindi and Arabic) in PostgreSQL (a private cluster, or --url), then downloads
 * `GET /v1/tenants/:id/reports/master.csv` over HTTP from a child process that parses every
 * record (quote-aware count, or csv-parse with --verify). Prints rows/s, MB/s and this (server) process's peak RSS during the
 * export, for a 10% slice and the whole table: flat memory means the export streams.
 *
 *   node --expose-gc --import tsx bench/report-export.ts [--calls 1000000] [--url postgres://...] [--verify]
 */
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { loadConfig } from '../core/config/load-config.js';
import { silentLogger } from '../core/logger.js';
import { createControlApp } from '../control-api/api/control-app.js';
import { createSecretBox } from '../control-api/platform/crypto/secret-box.js';
import { serve } from '../control-api/platform/http/serve.js';
import { openStore } from '../control-api/platform/store/database.js';
import { migrateToLatest } from '../control-api/platform/store/migrate.js';
import { createTenantsRepository } from '../control-api/model/tenants/tenants-repository.js';
import { startPostgresCluster, type PostgresCluster } from '../test/helpers/postgres-cluster.js';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}

const total = Number(arg('calls', '1000000'));
const chunk = 100_000;
const operatorToken = 'bench_operator_token_0123456789abcdef';
const secretKey = Buffer.alloc(32, 3);
const mb = (bytes: number): string => (bytes / 1024 / 1024).toFixed(1);

let cluster: PostgresCluster | undefined;
let url = arg('url', '');
if (!url) {
  process.stdout.write('starting a private PostgreSQL cluster...\n');
  cluster = await startPostgresCluster();
  url = await cluster.createDatabase('report_bench');
}
const store = await openStore({ url, poolSize: 4 });
try {
  await migrateToLatest(store.db);
  const tenant = await createTenantsRepository(createSecretBox(secretKey)).create(store.db, { clientId: 'bench', name: 'Bench', timezone: 'Asia/Kolkata', settings: { ssrfAllowlist: [] } });
  const insights = [
    { name: 'agreed_to_pay', description: 'Did the caller agree to pay?', type: 'boolean' },
    { name: 'amount', description: 'Amount promised', type: 'number' },
    { name: 'payment_date', description: 'Promised date', type: 'date' },
    { name: 'status', description: 'Outcome', type: 'enum', options: ['paid', 'promise_to_pay', 'dispute'] },
    { name: 'summary', description: 'Summary of the call', type: 'text' },
    { name: 'language_used', description: 'Language the caller spoke', type: 'text' },
    { name: 'callback_requested', description: 'Did the caller ask for a callback?', type: 'boolean' },
    { name: 'objection', description: 'Main objection', type: 'text' },
    { name: 'satisfaction', description: 'Satisfaction 1-5', type: 'number' },
    { name: 'next_step', description: 'Agreed next step', type: 'enum', options: ['none', 'visit', 'call'] },
  ];
  const recipe = {
    name: 'Bench recipe',
    startBlockId: 'hello',
    blocks: [{ id: 'hello', type: 'message', settings: { text: 'hi' } }],
    connections: [],
    globalSettings: { insights },
  };
  await store.db.insertInto('recipes').values({ tenant_id: tenant.id, name: recipe.name, spec: JSON.stringify(recipe) }).execute();

  const loadStarted = performance.now();
  for (let from = 1; from <= total; from += chunk) {
    const to = Math.min(total, from + chunk - 1);
    // One call per minute from 2025-01-01; every third summary carries the hard CSV cases.
    await sql`
      insert into calls (tenant_id, direction, phone_number, remote_number, message_id, started_at, answered_at, ended_at, status,
                         outcome, sip_status, duration_ms, end_reason, disposition, variables, analysis_status, analysis_completed_at, insights)
      select ${tenant.id}::uuid, 'outbound', '+918000000001', '+9198' || lpad(g::text, 8, '0'), gen_random_uuid(),
             timestamptz '2025-01-01 00:00:00+00' + g * interval '1 minute',
             timestamptz '2025-01-01 00:00:05+00' + g * interval '1 minute',
             timestamptz '2025-01-01 00:02:05+00' + g * interval '1 minute',
             'ended', 'completed', 200, 120000, 'closed', case when g % 5 = 0 then 'callback, later' else 'promise_to_pay' end,
             jsonb_build_object('name', 'Ravi ' || g), 'completed', timestamptz '2025-01-01 00:02:09+00' + g * interval '1 minute',
             jsonb_build_object(
               'agreed_to_pay', g % 2 = 0, 'amount', (g % 9000) + 500, 'payment_date', to_char(date '2025-02-01' + (g % 300), 'YYYY-MM-DD'),
               'status', 'promise_to_pay',
               'summary', case when g % 3 = 0 then 'Caller "Ravi" agreed, will pay ₹2,500' || chr(10) || 'हाँ, ठीक है — شكرا جزيلا' else 'Agreed to pay next week.' end,
               'language_used', 'hi-IN', 'callback_requested', g % 7 = 0, 'objection', null, 'satisfaction', g % 5 + 1, 'next_step', 'call')
        from generate_series(${from}::int, ${to}::int) g`.execute(store.db);
    process.stdout.write(`  stored ${to.toLocaleString('en')} / ${total.toLocaleString('en')} calls (${((performance.now() - loadStarted) / 1000).toFixed(0)} s)\n`);
  }
  await sql`analyze calls`.execute(store.db);

  const app = createControlApp({ store, logger: silentLogger, config: loadConfig({ env: {}, overrides: {} }), operatorToken, secretKey });
  const server = await serve(app, '127.0.0.1', 0);

  /** Downloads through a child process that parses the CSV; samples this process's RSS meanwhile. */
  const exportOnce = async (label: string, query: string): Promise<void> => {
    global.gc?.();
    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    const started = performance.now();
    const client = spawn(process.execPath, [
      '--input-type=module',
      '-e',
      // Counts records with a quote-aware byte scan (a quoted CRLF is inside a field), cheap
      // enough not to be the bottleneck; --verify parses every record with csv-parse instead.
      `import { parse } from 'csv-parse';
       const verify = ${JSON.stringify(process.argv.includes('--verify'))};
       const res = await fetch(process.argv[1], { headers: { Authorization: 'Bearer ${operatorToken}' } });
       if (res.status !== 200) { console.log(JSON.stringify({ status: res.status })); process.exit(1); }
       let bytes = 0, rows = 0, columns = 1, quoted = false, header = true;
       const parser = verify ? parse({ bom: true }) : undefined;
       parser?.on('readable', () => { let r; while ((r = parser.read()) !== null) { if (rows === 0) columns = r.length; rows++; } });
       const done = parser ? new Promise((ok, fail) => { parser.on('end', ok); parser.on('error', fail); }) : undefined;
       for await (const c of res.body) {
         bytes += c.length;
         if (parser) { if (!parser.write(c)) await new Promise((r) => parser.once('drain', r)); continue; }
         for (let i = 0; i < c.length; i++) {
           const b = c[i];
           if (b === 34) quoted = !quoted;
           else if (!quoted && b === 10) { rows++; header = false; }
           else if (header && !quoted && b === 44) columns++;
         }
       }
       if (parser) { parser.end(); await done; }
       console.log(JSON.stringify({ status: 200, bytes, rows: rows - 1, columns }));`,
      `${server.url}/v1/tenants/bench/reports/master.csv${query}`,
    ], { stdio: ['ignore', 'pipe', 'inherit'], cwd: process.cwd() });
    let out = '';
    client.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const progress = setInterval(() => process.stdout.write(`  ${label}: ${((performance.now() - started) / 1000).toFixed(0)} s, peak RSS ${mb(peak)} MB\n`), 5_000);
    await new Promise<void>((resolve) => client.on('close', () => resolve()));
    clearInterval(progress);
    clearInterval(sampler);
    const seconds = (performance.now() - started) / 1000;
    const result = JSON.parse(out.trim() || '{}') as { status: number; bytes: number; rows: number; columns: number };
    process.stdout.write(
      `${label}: ${result.rows.toLocaleString('en')} rows x ${result.columns} columns, ${mb(result.bytes)} MB in ${seconds.toFixed(1)} s = ` +
        `${Math.round(result.rows / seconds).toLocaleString('en')} rows/s, ${(result.bytes / 1024 / 1024 / seconds).toFixed(1)} MB/s; ` +
        `server RSS ${mb(baseline)} MB before, peak ${mb(peak)} MB (+${mb(peak - baseline)} MB)\n`,
    );
  };

  const tenth = new Date(Date.UTC(2025, 0, 1) + Math.floor(total / 10) * 60_000).toISOString();
  await exportOnce('10% slice', `?to=${encodeURIComponent(tenth)}`);
  await exportOnce('all calls', '');
  await server.close(0);
} finally {
  await store.close();
  await cluster?.stop();
}
