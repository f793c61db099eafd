/**
 * HTTP fuzz of every operation the platform serves (issue 12): the management API and the plant
 * sandbox as their OpenAPI documents describe them, plus Campaign SendMessage, against the real
 * platform (bin/platform.ts startPlatform, roles control + sandbox) on loopback with a real store.
 * Requests are generated from the schemas and mutated: wrong types, missing and extra fields, huge
 * values, U+0000 and lone surrogates in strings, keys, paths and queries, deep nesting, invalid
 * JSON, wrong content types, bad path parameters, oversized bodies (Content-Length and chunked),
 * valid and invalid tokens. Prints progress, then requests per operation, the status histogram
 * and every 5xx (or request left without an answer) with the request that caused it.
 *
 *   node --import tsx bench/http-fuzz.ts [--requests 30000] [--seed 1] [--concurrency 8] [--store postgres|pglite]
 *
 * PostgreSQL: DATABASE_URL if set, else a private cluster started here (test/helpers/postgres-cluster.ts).
 * Exit status 1 when any 5xx or unanswered request was seen.
 */
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startPostgresCluster, type PostgresCluster } from '../test/helpers/postgres-cluster.js';
import { runFuzz, type FuzzReport } from '../test/helpers/http-fuzz/fuzz-run.js';
import { startFuzzTarget } from '../test/helpers/http-fuzz/fuzz-target.js';

const { values: args } = parseArgs({
  options: {
    requests: { type: 'string', default: '30000' },
    seed: { type: 'string', default: '1' },
    concurrency: { type: 'string', default: '8' },
    store: { type: 'string', default: 'postgres' },
    'body-limit': { type: 'string', default: String(1024 * 1024) },
  },
});
const requests = Number(args.requests);
const bodyLimitBytes = Number(args['body-limit']);

async function database(): Promise<{ url?: string; cluster?: PostgresCluster }> {
  if (args.store === 'pglite') return {};
  if (process.env['DATABASE_URL']) {
    const admin = new pg.Client({ connectionString: process.env['DATABASE_URL'] });
    await admin.connect();
    const name = `fuzz_${process.pid}`;
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const url = new URL(process.env['DATABASE_URL']);
    url.pathname = `/${name}`;
    return { url: url.toString() };
  }
  const cluster = await startPostgresCluster();
  return { url: await cluster.createDatabase('fuzz'), cluster };
}

function printReport(report: FuzzReport, errorLogs: readonly string[]): void {
  const fiveXx = [...report.histogram].filter(([k]) => /^5/.test(k)).reduce((n, [, c]) => n + c, 0);
  const unanswered = [...report.histogram].filter(([k]) => k.startsWith('error:')).reduce((n, [, c]) => n + c, 0);
  console.log(`\n${report.requests} requests over ${report.operations.length} operations in ${report.seconds.toFixed(1)} s (${(report.requests / report.seconds).toFixed(0)}/s)`);
  console.log('\nrequests per operation:');
  for (const op of report.operations) {
    const statuses = [...(report.perOperation.get(op) ?? new Map<string, number>())].sort(([a], [b]) => a.localeCompare(b));
    const total = statuses.reduce((n, [, c]) => n + c, 0);
    console.log(`  ${String(total).padStart(6)}  ${op.padEnd(62)} ${statuses.map(([s, c]) => `${s}:${c}`).join(' ')}`);
  }
  console.log('\nstatus histogram:');
  for (const [status, count] of [...report.histogram].sort(([a], [b]) => a.localeCompare(b))) console.log(`  ${status.padEnd(18)} ${count}`);
  console.log(`\n5xx: ${fiveXx}, without an answer: ${unanswered}`);
  for (const f of report.failures) console.log(`  [${f.outcome}] ${f.op} (${f.mutation})\n      ${f.request}`);
  if (errorLogs.length > 0) {
    const causes = new Map<string, number>();
    for (const line of errorLogs) {
      const entry = JSON.parse(line) as { msg?: string; err?: { message?: string }; path?: string };
      const key = `${entry.msg ?? ''}: ${entry.err?.message ?? ''}`.slice(0, 300);
      causes.set(key, (causes.get(key) ?? 0) + 1);
    }
    console.log('\nerrors the platform logged (cause, count):');
    for (const [cause, count] of causes) console.log(`  ${String(count).padStart(5)}  ${cause}`);
  }
}

const db = await database();
console.log(`store: ${db.url ? 'PostgreSQL' : 'PGlite'}; ${requests} requests, seed ${args.seed}, concurrency ${args.concurrency}`);
const target = await startFuzzTarget({ ...(db.url ? { databaseUrl: db.url } : {}), bodyLimitBytes });
let report: FuzzReport;
try {
  report = await runFuzz(target, {
    seed: Number(args.seed),
    requests,
    concurrency: Number(args.concurrency),
    bodyLimitBytes,
    onProgress: (done, r) => {
      const bad = r.failures.length;
      process.stdout.write(`  ${done}/${requests} requests, ${bad} 5xx or unanswered\n`);
    },
  });
} finally {
  await target.stop();
  await db.cluster?.stop();
}
printReport(report, target.errorLogs);
process.exitCode = report.failures.length > 0 ? 1 : 0;
