/**
 * How many callees ring twice when the worker is killed with SIGKILL while it dials (issue 12).
 *
 * N campaign messages (one callee each) are due at once. The platform runs as a child process
 * with the gateway and worker roles (the production composition: store poller on PGlite, Agenda
 * on PostgreSQL), dialling over UDP loopback to a callee that rings `--ring-ms` then answers 486
 * and counts the distinct calls (Call-IDs) per number (test/helpers/counting-uas.ts). After
 * `--kill-after` calls reached the callee the child is killed with SIGKILL, started again on the
 * same database, and left to finish; then the callee's counts are read and the store is checked.
 *
 *   node --import tsx bench/kill-during-dialing.ts [--store pglite|postgres] [--calls 1000]
 *        [--kill-after 300] [--ring-ms 1000] [--claim-batch N] [--retries 0] [--lease-ms 30000] [--cpu-prof DIR]
 *
 * `--retries 1`: the campaign retries `failed` (busy is final), so any second call to a callee is
 * the retry of an attempt lost with the killed worker. The figures are in docs/scheduler.md.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { openStore } from '../control-api/platform/store/database.js';
import { CountingUas } from '../test/helpers/counting-uas.js';
import { dialingEnv, seedDialing, startPlatformChild } from '../test/helpers/dialing-platform.js';
import { stopTestPostgres, testPostgres } from '../test/helpers/postgres-cluster.js';

const { values: args } = parseArgs({
  options: {
    store: { type: 'string', default: 'pglite' },
    calls: { type: 'string', default: '1000' },
    'kill-after': { type: 'string', default: '300' },
    'ring-ms': { type: 'string', default: '1000' },
    'claim-batch': { type: 'string' },
    retries: { type: 'string', default: '0' },
    'lease-ms': { type: 'string', default: '30000' },
    /** Writes a CPU profile of the restarted worker into this directory. */
    'cpu-prof': { type: 'string' },
  },
});
const calls = Number(args.calls);
const killAfter = Number(args['kill-after']);
const kind = args.store === 'postgres' ? 'postgres' : 'pglite';
const secretKey = randomBytes(32);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  const uas = new CountingUas({ ringMs: Number(args['ring-ms']) });
  const uasPort = await uas.start();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'vap-kill-bench-'));
  const url = kind === 'postgres' ? await (await testPostgres()).createDatabase() : undefined;
  const open = () => openStore(url ? { url } : { pgliteDir: path.join(dataDir, 'pglite') });
  const leaseMs = Number(args['lease-ms']);
  const retries = Number(args.retries);
  const setup = await open();
  await seedDialing(setup, { calls, calleePort: uasPort, secretKey, retries }, Date.now());
  await setup.close();
  const env = dialingEnv({
    dataDir,
    secretKey,
    calls,
    leaseMs,
    rtpPortMin: 42_000,
    ...(url ? { url } : {}),
    ...(args['claim-batch'] ? { extra: { SCHEDULER_CLAIM_BATCH_SIZE: args['claim-batch'] } } : {}),
  });
  console.log(`${calls} calls due at once on ${kind}; the callee rings ${args['ring-ms']} ms then answers 486; SIGKILL once ${killAfter} calls reached it; lease ${leaseMs} ms, ${retries} retries (load ${loadavg()[0]!.toFixed(1)})`);
  const started = Date.now();
  const progress = setInterval(() => process.stdout.write(`  ${((Date.now() - started) / 1000).toFixed(0)} s: ${uas.total} calls reached the callee, ${uas.calls.size} callees\n`), 10_000);
  const first = startPlatformChild(env);
  await Promise.race([uas.waitForCalls(killAfter), first.exited.then((code) => Promise.reject(new Error(`worker exited early (${code})`)))]);
  first.child.kill('SIGKILL');
  await first.exited;
  const atKill = uas.total;
  // Datagrams the dead worker sent may still be on their way to the callee.
  await sleep(500);
  console.log(`  SIGKILL after ${((Date.now() - started) / 1000).toFixed(1)} s: ${atKill} calls had reached the callee (${uas.total} 500 ms later)`);

  const second = startPlatformChild(env, args['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', args['cpu-prof']] : []);
  await second.up;
  const restarted = Date.now();
  // The dead worker's leases expire, then a retry of its lost attempts may come 1 minute later.
  const settleBy = restarted + leaseMs + 15_000 + (retries > 0 ? 75_000 : 0);
  while ((Date.now() < settleBy || Date.now() - uas.lastCallAt < 10_000) && Date.now() - started < 900_000) await sleep(500);
  clearInterval(progress);
  second.child.kill('SIGTERM');
  await second.exited;
  // Lease recoveries are expected; anything else the workers logged is worth a look.
  for (const line of [...first.warnings, ...second.warnings].filter((l) => !l.includes('leases expired'))) console.log(`  [worker] ${line.slice(0, 300)}`);

  const store = await open();
  const statuses = await store.db.selectFrom('campaign_messages').select(['status']).select((eb) => eb.fn.countAll<string>().as('n')).groupBy('status').orderBy('status').execute();
  const attempts = await store.db.selectFrom('campaign_attempts').select(['status', 'reason']).select((eb) => eb.fn.countAll<string>().as('n')).groupBy(['status', 'reason']).orderBy('status').execute();
  await store.close();
  const twice = uas.rangMoreThanOnce();
  const resent = [...uas.datagrams.values()].filter((n) => n > 1).length;
  console.log(`  callees rung: ${uas.calls.size} of ${calls}; rung more than once (distinct calls): ${twice.length}; never rung: ${calls - uas.calls.size}`);
  console.log(`  calls ${uas.total}, INVITE datagrams ${uas.invites}; callees that got more than one INVITE datagram (retransmissions included): ${resent}`);
  console.log(`  messages: ${statuses.map((r) => `${r.status} ${r.n}`).join(', ')}`);
  console.log(`  attempts: ${attempts.map((r) => `${r.status}${r.reason ? ` (${r.reason.slice(0, 40)})` : ''} ${r.n}`).join(', ')}`);
  await uas.stop();
  rmSync(dataDir, { recursive: true, force: true });
  if (kind === 'postgres') await stopTestPostgres();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
