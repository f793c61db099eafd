/**
 * A carrier's burst against a node that is carrying calls (issue 30): the built platform (all
 * roles, plain node as `npm start` runs it) on a private PostgreSQL with examples/tenant applied,
 * plus a number whose recipe keeps talking (`+914440001050`, applied by this bench) for the calls
 * that must stay up.
 *
 * 1. `--calls` calls (20) from the trunk's termination address 127.0.0.20 to that number, RTP both
 *    ways (bench/sip-overload-peers.ts, its own process), every packet the platform sends timed;
 *    placed 300 ms apart, a call refused 503 is placed again after its Retry-After. Then one call
 *    to the flooded number, answered and spoken to its end (a node in service is warm).
 * 2. An OPTIONS monitor on 127.0.0.2 every `--probe-ms` (500), its own process.
 * 3. SIPp floods INVITEs from the same trunk address 127.0.0.20 to the provisioned `+914440001001`
 *    at `--rate`/s (2,000) for `--seconds` (20), each sent once (-nr), each timed to its final
 *    answer (sipp-scenarios/uac-invite-flood-timed.xml, -trace_rtt).
 * 4. The calls stay up `--after` s (5) past the flood, then hang up; the platform's RSS is sampled
 *    until `--settle` s (120) after the flood.
 *
 * Printed: the flood's outcome (200 / 503 + Retry-After / 486 / no answer; answers later than 2 s),
 * what the platform says it shed (vap_sip_requests_shed_total by reason) and what the kernel
 * dropped on its SIP socket (/proc/net/udp), the probes (answered, p50/p99/max), the calls' audio
 * (gaps over 100 ms, loss, calls the platform ended), RSS at start, at the flood's end and after,
 * and the machine's load (load average, CPU of the platform, SIPp and the rest of the machine).
 *
 *   node --import tsx bench/sip-overload.ts [--rate 2000] [--seconds 20] [--calls 20] [--probe-ms 500]
 *     [--after 5] [--settle 120] [--store postgres|pglite] [--profile DIR]   (the platform's CPU profile, written when it stops)
 *     [--env KEY=VALUE ...]   (extra platform environment, e.g. SIP_ABUSE_PER_SOURCE_RATE=5000)
 */
import { fork, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { freePort } from '../test/helpers/edge-cluster.js';
import { spawnPlatform, waitForLine, type PlatformProcess } from '../test/helpers/platform-process.js';
import { startPostgresCluster, type PostgresCluster } from '../test/helpers/postgres-cluster.js';
import { runSipp } from '../test/helpers/sipp.js';
import type { CallersReport, ProbeReport } from './sip-overload-peers.js';
import { floodCounts, holdLineDocuments, kernelDrops, machineCpu, metricSum, pct, processCpu, rssMb, rtts } from './sip-overload-support.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values: args } = parseArgs({
  options: {
    rate: { type: 'string', default: '2000' },
    seconds: { type: 'string', default: '20' },
    calls: { type: 'string', default: '20' },
    'probe-ms': { type: 'string', default: '500' },
    after: { type: 'string', default: '5' },
    settle: { type: 'string', default: '120' },
    env: { type: 'string', multiple: true, default: [] },
    store: { type: 'string', default: 'postgres' },
    profile: { type: 'string' },
  },
});
const rate = Number(args.rate);
const seconds = Number(args.seconds);
const TRUNK = '127.0.0.20';
const MONITOR = '127.0.0.2';
const HOLD_NUMBER = '+914440001050';
const FLOOD_NUMBER = '+914440001001';
const scenario = 'uac-invite-flood-timed.xml';

const cleanup: Array<() => Promise<void> | void> = [];
async function cleanUp(): Promise<void> {
  for (const step of cleanup.splice(0).reverse()) await Promise.resolve(step()).catch(() => undefined);
}

/** A peer child (sip-overload-peers.ts): resolves its first message (`up`), then `finish()` stops it and returns its report. */
async function peer<T>(argv: string[]): Promise<{ up: unknown; finish(): Promise<T> }> {
  const child: ChildProcess = fork(path.join(root, 'bench/sip-overload-peers.ts'), argv, { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  cleanup.push(() => void child.kill('SIGKILL'));
  const messages: Array<Record<string, unknown>> = [];
  const next = (): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      const shifted = messages.shift();
      if (shifted) return resolve(shifted);
      child.once('message', () => resolve(messages.shift() as Record<string, unknown>));
      child.once('exit', (code) => reject(new Error(`peer ${argv[0]} exited ${code}`)));
    });
  child.on('message', (m: Record<string, unknown>) => messages.push(m));
  const up = (await next())['up'];
  return {
    up,
    finish: async () => {
      child.send('stop');
      return (await next())['report'] as T;
    },
  };
}

async function main(): Promise<void> {
  const built = spawnSync(process.execPath, ['scripts/build-dist.mjs', '--if-stale'], { cwd: root, stdio: 'inherit' });
  if (built.status !== 0) throw new Error('building dist/ failed');
  const work = mkdtempSync(path.join(tmpdir(), 'vap-overload-'));
  cleanup.push(() => rmSync(work, { recursive: true, force: true }));
  let databaseUrl = '';
  if (args.store === 'postgres') {
    const pg: PostgresCluster = await startPostgresCluster();
    cleanup.push(() => pg.stop());
    databaseUrl = await pg.createDatabase('overload_bench');
  }
  const [sipPort, controlPort, sandboxPort] = [await freePort('127.0.0.1'), await freePort('127.0.0.1'), await freePort('127.0.0.1')];
  const extra = Object.fromEntries((args.env as string[]).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
  const env: Record<string, string> = {
    CONFIG_FILE: '', DATA_DIR: path.join(work, 'data'), DATABASE_URL: databaseUrl, SECRET_KEY: randomBytes(32).toString('hex'),
    OPERATOR_TOKEN: `overload-operator-${randomBytes(12).toString('hex')}`, CONTROL_HOST: '127.0.0.1', CONTROL_PORT: String(controlPort),
    SANDBOX_HOST: '127.0.0.1', SANDBOX_PORT: String(sandboxPort), SIP_HOST: '127.0.0.1', SIP_PORT: String(sipPort), SIP_TLS_PORT: '0',
    SIP_WS_PORT: '0', SIP_WSS_PORT: '0', SIP_PUBLIC_ADDRESS: '127.0.0.1', PROVIDERS_HOST: '127.0.0.1', PROVIDERS_PORT: '0',
    RTP_BIND_ADDRESS: '127.0.0.1', RTP_PORT_MIN: '31000', RTP_PORT_MAX: '33998', LOG_LEVEL: 'info', DRAIN_TIMEOUT_MS: '1000',
    ...extra,
  };
  writeFileSync(path.join(work, 'hold-line.yaml'), holdLineDocuments(HOLD_NUMBER));
  const apply = spawnSync(process.execPath, ['--import', 'tsx', 'bin/cli.ts', 'apply', '-f', 'examples/tenant', '-f', path.join(work, 'hold-line.yaml')], { cwd: root, env: { ...process.env, ...env }, encoding: 'utf8' });
  if (apply.status !== 0) throw new Error(`apply failed: ${apply.stderr}${apply.stdout}`);

  // Its own session: on this shared machine the platform gets the CPU share a node of its own
  // would (autogroup scheduling), not a slice of the share SIPp and the peers drive it from.
  const platform: PlatformProcess = spawnPlatform(env, [], { built: 'plain', ownSession: true, ...(args.profile ? { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${path.resolve(args.profile)}`] } : {}) });
  cleanup.push(async () => {
    // SIGTERM first: a drain of a second, then the process writes its CPU profile (--profile) and exits.
    const exited = new Promise((resolve) => platform.child.once('exit', resolve));
    platform.child.kill('SIGTERM');
    if (platform.child.exitCode === null && platform.child.signalCode === null) await Promise.race([exited, new Promise((r) => setTimeout(r, 20_000))]);
    if (platform.child.exitCode === null && platform.child.signalCode === null) {
      console.error('the platform did not stop within 20 s of SIGTERM: killed');
      platform.child.kill('SIGKILL');
    }
  });
  await waitForLine(platform, 'platform started', 120_000);
  const pid = platform.child.pid as number;
  const metrics = async (): Promise<string> => (await fetch(`http://127.0.0.1:${controlPort}/metrics`)).text();
  const gateway = ['127.0.0.1', String(sipPort)];

  console.log(`platform pid ${pid} (built, all roles, own session, ${args.store === 'postgres' ? 'PostgreSQL' : 'embedded PGlite'}), SIP 127.0.0.1:${sipPort}; extra env ${JSON.stringify(extra)}; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const callers = await peer<CallersReport>(['callers', ...gateway, TRUNK, HOLD_NUMBER, args.calls as string]);
  console.log(`${String(callers.up)} of ${args.calls} calls up from ${TRUNK} to ${HOLD_NUMBER} with RTP both ways`);
  // A node in service has run the flooded number's recipe before: one call to it first, answered
  // and spoken to its end, so the flood does not also measure the first call's lazy loading.
  const warm = await runSipp({ scenario: 'uac-invite-expect-200-gateway-bye.xml', target: `127.0.0.1:${sipPort}`, localIp: TRUNK, service: FLOOD_NUMBER, keys: { caller: '+919800000002' }, timeoutMs: 60_000 });
  if (warm.successful !== 1) throw new Error(`the warm-up call to ${FLOOD_NUMBER} failed: ${JSON.stringify(warm).slice(0, 400)}`);
  const probes = await peer<ProbeReport>(['probe', ...gateway, MONITOR, args['probe-ms'] as string]);
  await new Promise((r) => setTimeout(r, 3000));

  const rssStart = rssMb(pid);
  const before = { metrics: await metrics(), drops: kernelDrops('127.0.0.1', sipPort), cpu: processCpu(pid), machine: machineCpu() };
  copyFileSync(path.join(root, 'sipp-scenarios', scenario), path.join(work, scenario));
  const calls = rate * seconds;
  console.log(`flood: ${calls} INVITEs at ${rate}/s for ${seconds} s from ${TRUNK} to ${FLOOD_NUMBER}; OPTIONS from ${MONITOR} every ${args['probe-ms']} ms; RSS ${rssStart} MB`);
  const floodStart = Date.now();
  const sippPort = await freePort(TRUNK);
  const sipp = spawn('/usr/bin/sipp', [
    `127.0.0.1:${sipPort}`, '-sf', path.join(work, scenario), '-t', 'u1', '-i', TRUNK, '-p', String(sippPort),
    '-m', String(calls), '-r', String(rate), '-l', String(rate * 5), '-s', FLOOD_NUMBER, '-key', 'caller', '+919800000001', '-key', 'to_user', FLOOD_NUMBER,
    '-nr', '-nostdin', '-buff_size', '4194304', '-trace_counts', '-trace_rtt', '-rtt_freq', '100', '-fd', '1', '-timeout', `${seconds + 30}s`,
  ], { cwd: work, stdio: ['ignore', 'ignore', 'pipe'] });
  cleanup.push(() => void sipp.kill('SIGKILL'));
  let sippErr = '';
  sipp.stderr.on('data', (d: Buffer) => (sippErr = (sippErr + d.toString()).slice(-4000)));
  const sippCpu: { last: number; drops: number } = { last: 0, drops: 0 };
  const rssSeries: Array<[number, number]> = [];
  const lagSeries: number[] = [];
  const sampler = setInterval(() => {
    rssSeries.push([Math.round((Date.now() - floodStart) / 1000), rssMb(pid)]);
    if (Date.now() < floodStart + seconds * 1000) {
      void metrics().then((m) => lagSeries.push(Math.round((metricSum(m, 'vap_gateway_event_loop_lag_seconds', {}).get('') ?? NaN) * 1000)), () => undefined);
    }
    try {
      sippCpu.last = processCpu(sipp.pid as number).self;
      // SIPp's own socket: answers the kernel dropped before SIPp read them (gone when SIPp exits).
      const d = kernelDrops(TRUNK, sippPort);
      if (Number.isFinite(d)) sippCpu.drops = d;
    } catch {
      // SIPp has exited.
    }
  }, 1000);
  cleanup.push(() => clearInterval(sampler));
  const code = await new Promise<number | null>((resolve) => sipp.once('exit', (c) => resolve(c)));
  const floodEnd = Date.now();
  const after = { metrics: await metrics(), drops: kernelDrops('127.0.0.1', sipPort), cpu: processCpu(pid), machine: machineCpu() };
  const rssAtEnd = rssMb(pid);
  await new Promise((r) => setTimeout(r, Number(args.after) * 1000));
  const probeReport = await probes.finish();
  const callReport = await callers.finish();
  const counts = floodCounts(work);
  const times = rtts(work);
  if (!counts) throw new Error(`SIPp left no counts (exit ${code}): ${sippErr}`);

  const settleUntil = floodEnd + Number(args.settle) * 1000;
  while (Date.now() < settleUntil) await new Promise((r) => setTimeout(r, 1000));
  clearInterval(sampler);
  const rssSettled = rssMb(pid);

  // ---- report ----
  const shed = (m: string, action: string): Map<string, number> => metricSum(m, 'vap_sip_requests_shed_total', { action });
  const delta = (a: Map<string, number>, b: Map<string, number>): string =>
    [...b].map(([reason, v]) => [reason, v - (a.get(reason) ?? 0)] as const).filter(([, v]) => v > 0).map(([r, v]) => `${r}: ${v}`).join(', ') || 'none';
  const wall = (floodEnd - floodStart) / 1000;
  const platformCpu = after.cpu.withChildren - before.cpu.withChildren;
  const machine = { busy: after.machine.busy - before.machine.busy, total: after.machine.total - before.machine.total };
  console.log(`\nSIPp exit ${code}; flood ${wall.toFixed(1)} s (with 3 s answer timeouts)`);
  console.log(`flood offered  ${counts.invites} INVITEs (${(counts.invites / seconds).toFixed(0)}/s), ${counts.retransmissions} retransmissions`);
  console.log(`  answered 200 ${counts.answered}`);
  console.log(`  refused 503  ${counts.refused} (each with Retry-After: SIPp fails a 503 without one)`);
  console.log(`  busy 486     ${counts.busy}`);
  console.log(`  no answer    ${counts.unanswered}; provisional only ${counts.unfinished}; unexpected ${counts.unexpected}`);
  console.log(`  final answer after the INVITE: ${times.length} timed, p50 ${pct(times, 50).toFixed(1)} ms, p99 ${pct(times, 99).toFixed(1)} ms, max ${(times[times.length - 1] ?? NaN).toFixed(1)} ms; later than 2 s: ${times.filter((t) => t > 2000).length}`);
  console.log(`platform shed (refused): ${delta(shed(before.metrics, 'refused'), shed(after.metrics, 'refused'))}`);
  console.log(`platform shed (dropped): ${delta(shed(before.metrics, 'dropped'), shed(after.metrics, 'dropped'))}`);
  console.log(`kernel receive drops on the SIP UDP socket: ${after.drops - before.drops}; on SIPp's socket (answers SIPp never read): ${sippCpu.drops}`);
  const lat = [...probeReport.answered.map(([, ms]) => ms)].sort((a, b) => a - b);
  console.log(`OPTIONS from ${MONITOR}: ${probeReport.sent} sent, ${lat.length} answered, ${probeReport.sent - lat.length} lost; p50 ${pct(lat, 50).toFixed(1)} ms, p99 ${pct(lat, 99).toFixed(1)} ms, max ${(lat[lat.length - 1] ?? NaN).toFixed(1)} ms`);
  const slow = probeReport.answered.filter(([, ms]) => ms > 100).map(([at, ms]) => `${((at - floodStart) / 1000).toFixed(1)} s: ${ms.toFixed(0)} ms`);
  if (slow.length > 0) console.log(`  probes over 100 ms (seconds after the flood began): ${slow.join(', ')}`);
  const up = callReport.calls.filter((c) => c.answered);
  const gaps = up.flatMap((c) => c.gaps.map(([at, ms]) => [c.callId.split('@')[0], at, ms] as const));
  console.log(`calls: ${up.length} up, ${up.filter((c) => c.endedByPlatform).length} ended by the platform; RTP in ${up.reduce((n, c) => n + c.packetsIn, 0)}, out ${up.reduce((n, c) => n + c.packetsOut, 0)}, lost ${up.reduce((n, c) => n + c.lost, 0)}; largest gap ${Math.max(0, ...up.map((c) => c.maxGapMs))} ms`);
  console.log(`  gaps over 100 ms: ${gaps.length}${gaps.length ? ` (${gaps.slice(0, 20).map(([id, at, ms]) => `${id} at ${((at - floodStart) / 1000).toFixed(1)} s: ${ms} ms`).join(', ')})` : ''}`);
  console.log(`  the callers' own loop stalls over 50 ms: ${callReport.stalls.length}${callReport.stalls.length ? ` (max ${Math.max(...callReport.stalls.map(([, ms]) => ms))} ms)` : ''}`);
  console.log(`event-loop delay admission judged by (mean over the last second, sampled each second of the flood): max ${Math.max(...lagSeries).toFixed(0)} ms; ${lagSeries.map((v) => v.toFixed(0)).join(' ')}`);
  console.log(`RSS: ${rssStart} MB before the flood, ${rssAtEnd} MB at its end, peak ${Math.max(...rssSeries.map(([, mb]) => mb))} MB, ${rssSettled} MB ${args.settle} s after (${(((rssSettled - rssStart) / rssStart) * 100).toFixed(1)}%)`);
  console.log(`  series (s after the flood began: MB): ${rssSeries.filter(([s]) => s % 10 === 0).map(([s, mb]) => `${s}: ${mb}`).join(', ')}`);
  console.log(`CPU during the flood (${wall.toFixed(1)} s, 2 cores = 200%): platform with its children ${((platformCpu / wall) * 100).toFixed(0)}%, SIPp ${((sippCpu.last / wall) * 100).toFixed(0)}%, whole machine ${((machine.busy / machine.total) * 200).toFixed(0)}%; load average now ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
}

const stop = (code: number) => (): void => void cleanUp().finally(() => process.exit(code));
process.once('SIGINT', stop(130));
process.once('SIGTERM', stop(143));
void main().then(stop(0), (error: unknown) => {
  console.error(error);
  stop(1)();
});
