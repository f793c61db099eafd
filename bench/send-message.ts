/**
 * Campaign SendMessage and scheduler benchmark (issue 5).
 *  1. Sustained SendMessage requests/s with persistence (PostgreSQL, group commit, Agenda jobs
 *     per due moment), side by side with a bare Koa handler in the same run; the load generator
 *     runs in a worker thread with keep-alive connections. Requests for the same future moment
 *     share one Agenda job; requests due at once need one per group commit (both measured).
 *  2. Lateness of 10,000 calls due at the same instant: time from the due moment to the
 *     Originator being called (the INVITE leaves right after; the SIP gateway is not built yet,
 *     so the originator is a test double answering busy at once).
 *
 *   node --import tsx bench/send-message.ts [--seconds 10] [--concurrency 64] [--calls 10000] [--fast] [--phases throughput,agenda,poll]
 *
 * PostgreSQL: DATABASE_URL if set; otherwise a private cluster is started here, with durable
 * commits (fsync on, synchronous_commit on) unless --fast (fsync off, like the test cluster).
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chownSync, chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import Koa from 'koa';
import pg from 'pg';
import { createLogger } from '../core/logger.js';
import type { OriginateResult } from '../core/ports/originator.js';
import { acceptMessage } from '../control-api/features/campaigns/accept-message.js';
import { campaignEnqueuer, startCampaignWorker } from '../control-api/features/campaigns/campaign-worker.js';
import { ScriptedOriginator, seedCampaign, seedTenant } from '../test/helpers/campaign-support.js';
import { createSecretBox } from '../control-api/platform/crypto/secret-box.js';
import { serve } from '../control-api/platform/http/serve.js';
import { openStore, type Store } from '../control-api/platform/store/database.js';
import { migrateToLatest } from '../control-api/platform/store/migrate.js';
import { startControl } from '../test/campaigns/twirp-client.js';

const { values: args } = parseArgs({
  options: { phases: { type: 'string', default: 'throughput,agenda,poll' }, seconds: { type: 'string', default: '10' }, concurrency: { type: 'string', default: '64' }, calls: { type: 'string', default: '10000' }, fast: { type: 'boolean', default: false } },
});
const seconds = Number(args.seconds);
const concurrency = Number(args.concurrency);
const calls = Number(args.calls);
const logger = createLogger({ level: 'warn' });
const box = createSecretBox(Buffer.alloc(32, 7));

async function privatePostgres(fast: boolean): Promise<{ url: string; stop: () => Promise<void> }> {
  const bin = '/usr/lib/postgresql/15/bin';
  const root = mkdtempSync(path.join(tmpdir(), 'vap-bench-pg-'));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) chownSync(root, Number(execFileSync('id', ['-u', 'postgres']).toString()), Number(execFileSync('id', ['-g', 'postgres']).toString()));
  chmodSync(root, 0o700);
  const run = (cmd: string, a: string[]): [string, string[]] => (asRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...a]] : [cmd, a]);
  const [ic, ia] = run(`${bin}/initdb`, ['-D', `${root}/data`, '-U', 'postgres', '-A', 'trust', '--no-sync']);
  execFileSync(ic, ia, { stdio: 'ignore' });
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const extra = fast ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'] : [];
  const [pc, pa] = run(`${bin}/postgres`, ['-D', `${root}/data`, '-p', String(port), '-k', root, '-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200', ...extra]);
  const child = spawn(pc, pa, { stdio: 'ignore' });
  const url = `postgresql://postgres@127.0.0.1:${port}/postgres`;
  for (let i = 0; ; i++) {
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.end();
      break;
    } catch {
      if (i > 200) throw new Error('postgres did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    url,
    stop: async () => {
      // As root the child is runuser, which ignores SIGINT (the bench then waited forever for it);
      // pg_ctl signals the postmaster itself (fast shutdown) and waits for it.
      const exited = new Promise((r) => child.once('exit', r));
      const [sc, sa] = run(`${bin}/pg_ctl`, ['stop', '-D', `${root}/data`, '-m', 'fast', '-w']);
      execFileSync(sc, sa, { stdio: 'ignore' });
      await exited;
      rmSync(root, { recursive: true, force: true });
    },
  };
}

// The load generator: plain JS in a worker thread so it gets the other core.
const clientSource = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const { port, host, token, body, concurrency, durationMs } = workerData;
const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
const headers = { Host: host, 'Content-Type': 'application/json', Authorization: token, 'Content-Length': Buffer.byteLength(body) };
let ok = 0, errors = 0; const lat = [];
const end = Date.now() + durationMs;
const one = () => new Promise((resolve) => {
  const t = process.hrtime.bigint();
  const req = http.request({ agent, host: '127.0.0.1', port, method: 'POST', path: '/api/v1/Campaign/SendMessage', headers }, (res) => {
    res.resume();
    res.on('end', () => { if (res.statusCode === 200) ok++; else errors++; lat.push(Number(process.hrtime.bigint() - t) / 1e6); resolve(); });
  });
  req.on('error', () => { errors++; resolve(); });
  req.end(body);
});
const loop = async () => { while (Date.now() < end) await one(); };
const started = Date.now();
Promise.all(Array.from({ length: concurrency }, loop)).then(() => {
  lat.sort((a, b) => a - b);
  const q = (p) => lat[Math.min(lat.length - 1, Math.floor(lat.length * p))] || 0;
  parentPort.postMessage({ ok, errors, seconds: (Date.now() - started) / 1000, p50: q(0.5), p99: q(0.99) });
});
`;

interface LoadResult {
  readonly ok: number;
  readonly errors: number;
  readonly seconds: number;
  readonly p50: number;
  readonly p99: number;
}

function load(port: number, token: string, body: string, durationMs: number): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(clientSource, { eval: true, workerData: { port, host: 'acme.localhost', token, body, concurrency, durationMs } });
    worker.once('message', (m: LoadResult) => {
      void worker.terminate();
      resolve(m);
    });
    worker.once('error', reject);
  });
}

async function countAgendaJobs(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM agenda_jobs')).rows[0]?.n ?? 0);
  } finally {
    await client.end();
  }
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
}

async function throughput(store: Store, token: string, campaignId: string): Promise<void> {
  const jobs = await campaignEnqueuer(store, logger, 'bench-control');
  const control = await startControl(store, { ...(jobs ? { enqueue: (id, at) => jobs.enqueue(id, at) } : {}) });
  const bare = new Koa();
  bare.use(async (ctx) => {
    // Same shape of work a handler minimally does: read the JSON body, answer an id.
    const chunks: Buffer[] = [];
    for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
    JSON.parse(Buffer.concat(chunks).toString('utf8'));
    ctx.type = 'application/json';
    ctx.body = { message_id: randomUUID() };
  });
  const bareServer = await serve(bare, '127.0.0.1', 0);
  const body = JSON.stringify({
    CampaignID: campaignId,
    To: { PhoneNumber: '919876543210' },
    Variables: { name: 'Asha', plan: 'gold' },
    // Loopback, so the outbox row is written as in production but nothing leaves the machine.
    Callback: { URL: 'http://127.0.0.1:9/hooks/calls', State: { lead: 'L-1' } },
    ScheduledAt: { Time: new Date(Date.now() + 30 * 86_400_000).toISOString().replace(/\.\d+Z$/, 'Z') },
  });
  await load(control.port, token, body, 2_000); // warm-up
  await load(bareServer.port, token, body, 2_000);
  const koa = await load(bareServer.port, token, body, seconds * 1000);
  const send = await load(control.port, token, body, seconds * 1000);
  // Due at once (ScheduledAt in the past): every group commit then needs its own Agenda job.
  const dueNow = await load(control.port, token, JSON.stringify({ ...JSON.parse(body), ScheduledAt: { Time: '2020-01-01T00:00:00Z' } }), seconds * 1000);
  // The same endpoint without the Agenda job insert (as on PGlite, where the store poller is the trigger).
  const storeOnly = await startControl(store);
  const plain = await load(storeOnly.port, token, body, seconds * 1000);
  await storeOnly.close(0);
  const rate = (r: LoadResult) => r.ok / r.seconds;
  console.log(`\nSendMessage throughput (${seconds} s each, ${concurrency} keep-alive connections, client in a worker thread)`);
  console.log(`  bare Koa handler        ${rate(koa).toFixed(0).padStart(7)} req/s  p50 ${koa.p50.toFixed(1)} ms  p99 ${koa.p99.toFixed(1)} ms  errors ${koa.errors}`);
  console.log(`  SendMessage (persisted) ${rate(send).toFixed(0).padStart(7)} req/s  p50 ${send.p50.toFixed(1)} ms  p99 ${send.p99.toFixed(1)} ms  errors ${send.errors}`);
  console.log(`  SendMessage, due at once  ${rate(dueNow).toFixed(0).padStart(6)} req/s  p50 ${dueNow.p50.toFixed(1)} ms  p99 ${dueNow.p99.toFixed(1)} ms  errors ${dueNow.errors}`);
  console.log(`  SendMessage, no Agenda job ${rate(plain).toFixed(0).padStart(4)} req/s  p50 ${plain.p50.toFixed(1)} ms  p99 ${plain.p99.toFixed(1)} ms  errors ${plain.errors}`);
  console.log(`  ratio SendMessage / bare Koa: ${(rate(send) / rate(koa)).toFixed(3)} with the Agenda job, ${(rate(dueNow) / rate(koa)).toFixed(3)} due at once, ${(rate(plain) / rate(koa)).toFixed(3)} without`);
  const agendaJobs = store.url ? await countAgendaJobs(store.url) : 0;
  console.log(`  Agenda jobs written: ${agendaJobs} for ${send.ok + dueNow.ok} stored messages (one per due moment and group, see campaign-service.ts)`);
  await control.close(0);
  await bareServer.close(0);
  await jobs?.close();
  // The throughput phase's messages are due in a month; clear them (and their jobs) for the next phase.
  await store.db.deleteFrom('campaign_messages').execute();
  if (store.url) {
    const client = new pg.Client({ connectionString: store.url });
    await client.connect();
    await client.query('DELETE FROM agenda_jobs');
    await client.end();
  }
}

async function lateness(store: Store, tenantId: string, campaignId: string, trigger: 'agenda' | 'poll'): Promise<void> {
  const far = Date.now() + 3_600_000;
  const jobs = trigger === 'agenda' ? await campaignEnqueuer(store, logger, 'bench-seed') : undefined;
  const seedStart = Date.now();
  const ids: string[] = [];
  for (let i = 0; i < calls; i += 100) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(100, calls - i) }, () =>
        acceptMessage(store.db, tenantId, { campaignId, to: '+919876543210', variables: {}, scheduledAt: far, bypassCallingWindow: true }, { now: Date.now() }),
      ),
    );
    ids.push(...batch.map((b) => b.messageId));
    if (jobs) await Promise.all(batch.map((b) => jobs.enqueue(b.messageId, far)));
  }
  const seedSeconds = (Date.now() - seedStart) / 1000;
  const due = Date.now() + 8_000;
  await store.db.updateTable('campaign_messages').set({ next_attempt_at: new Date(due), requested_at: new Date(due) }).where('id', 'in', ids).execute();
  if (jobs) {
    const client = new pg.Client({ connectionString: store.url });
    await client.connect();
    await client.query('UPDATE agenda_jobs SET next_run_at = $1 WHERE name = $2', [new Date(due), 'campaign-message']);
    await client.end();
    await jobs.close();
  }
  const lateMs: number[] = [];
  const originator = new ScriptedOriginator().otherwise((): OriginateResult => {
    lateMs.push(Date.now() - due);
    return { outcome: 'busy', sipStatus: 486 };
  });
  const worker = await startCampaignWorker({ store, logger, originator, secretBox: box, trigger, workerId: `bench-${trigger}`, reconcileGraceMs: 600_000 });
  while (lateMs.length < calls && Date.now() < due + 180_000) await new Promise((r) => setTimeout(r, 100));
  await worker.stop(1_000);
  const sorted = [...lateMs].sort((a, b) => a - b);
  console.log(`\n${calls} calls due at the same instant, trigger ${trigger} (${trigger === 'agenda' ? 'Agenda 6 + postgres-backend' : 'store poller'}); seeded in ${seedSeconds.toFixed(1)} s`);
  console.log(`  originate() called for ${lateMs.length}/${calls}; lateness from due: p50 ${percentile(sorted, 0.5)} ms, p99 ${percentile(sorted, 0.99)} ms, max ${sorted.at(-1) ?? 0} ms, early ${sorted.filter((l) => l < 0).length}`);
  await store.db.deleteFrom('campaign_messages').where('id', 'in', ids).execute();
}

async function main(): Promise<void> {
  const external = process.env.DATABASE_URL;
  const cluster = external ? undefined : await privatePostgres(args.fast);
  const url = external ?? cluster!.url;
  console.log(`PostgreSQL: ${external ? 'DATABASE_URL' : `private cluster, ${args.fast ? 'fsync off (fast)' : 'durable commits (fsync on, synchronous_commit on)'}`}; node ${process.version}`);
  const store = await openStore({ url, poolSize: 20 });
  try {
    await migrateToLatest(store.db);
    // The requests' Callback.URL is on loopback, which SendMessage refuses unless the tenant allows it.
    const tenant = await seedTenant(store.db, box, { clientId: 'acme', allowLoopback: true });
    const campaignId = await seedCampaign(store.db, box, tenant.tenantId, 'Bench');
    const phases = args.phases.split(',');
    if (phases.includes('throughput')) await throughput(store, tenant.token, campaignId);
    if (phases.includes('agenda')) await lateness(store, tenant.tenantId, campaignId, 'agenda');
    if (phases.includes('poll')) await lateness(store, tenant.tenantId, campaignId, 'poll');
  } finally {
    await store.close();
    await cluster?.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
