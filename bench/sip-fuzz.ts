/**
 * Mutation fuzz of the real gateway: `node --import tsx bench/sip-fuzz.ts [--cases 100000]
 * [--seed 1] [--rate 1500] [--tcp-share 0.4] [--sources 64] [--only 12,345] [--no-netns]`.
 *
 * SipGateway with the whole stack on 127.0.0.1 (UDP + TCP) over the gateway tests' PostgreSQL
 * directory; cases are seeds (normal INVITE/OPTIONS/REGISTER/BYE/CANCEL/ACK/INFO, requests inside the
 * calls the gateway answered, and the 49 RFC 4475 messages) with 0-3 mutations (test/fuzz/sip-fuzz-cases.ts), from 127.0.3.1..N, TCP ones in
 * random fragments or several per segment; an OPTIONS probe from 127.0.0.2 every 200 cases. The
 * cases depend only on the seed. Prints progress, then: cases, responses by class, 5xx (those RFC
 * 3261 requires - 501, 505, 500 for a CSeq out of order or an overlapping INVITE - are listed
 * apart), crashes (uncaught
 * exceptions and unhandled rejections), unanswered probes, error-level log records. Exits 1 if
 * any of 5xx, crashes or unanswered probes is not 0.
 *
 * As root it re-runs itself in a fresh network namespace with only `lo` (unshare -n), so no
 * mutated address or name can make anything leave the machine, whatever the sanitizer misses.
 */
import { spawnSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { linesAt, startFuzzGateway } from '../test/fuzz/fuzz-gateway.js';
import { runSipFuzz, type FuzzStats } from '../test/fuzz/sip-fuzz-run.js';
import { stopTestPostgres } from '../test/helpers/postgres-cluster.js';

const { values: args } = parseArgs({
  options: {
    cases: { type: 'string', default: '100000' },
    seed: { type: 'string', default: '1' },
    rate: { type: 'string', default: '1500' },
    'tcp-share': { type: 'string', default: '0.4' },
    sources: { type: 'string', default: '64' },
    only: { type: 'string' },
    'no-netns': { type: 'boolean', default: false },
  },
});

function reexecInNetns(): boolean {
  if (args['no-netns'] || process.env.SIP_FUZZ_NETNS === '1' || process.getuid?.() !== 0) return false;
  const argv = process.argv.slice(1).map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const node = `'${process.execPath}' ${process.execArgv.join(' ')} ${argv}`;
  const r = spawnSync('unshare', ['-n', 'sh', '-c', `ip link set lo up && exec ${node}`], { stdio: 'inherit', env: { ...process.env, SIP_FUZZ_NETNS: '1' } });
  if (r.error) return false;
  process.exit(r.status ?? 1);
}

const byClass = (s: FuzzStats): string => {
  const classes = new Map<string, number>();
  for (const [code, n] of s.byStatus) classes.set(`${Math.floor(code / 100)}xx`, (classes.get(`${Math.floor(code / 100)}xx`) ?? 0) + n);
  return [...classes].sort().map(([k, n]) => `${k} ${n}`).join(', ');
};

async function main(): Promise<void> {
  if (reexecInNetns()) return;
  const cases = Number(args.cases);
  const seed = Number(args.seed);
  const gw = await startFuzzGateway(Number(args.sources));
  const started = Date.now();
  const cpuStart = process.cpuUsage();
  console.log(`sip-fuzz: seed ${seed}, ${args.only ? `cases ${args.only}` : `${cases} cases`}, ${args.rate}/s, TCP share ${args['tcp-share']}, ${gw.sources.length} sources${process.env.SIP_FUZZ_NETNS === '1' ? ', own network namespace (lo only)' : ''}`);
  const stats = await runSipFuzz({
    seed,
    cases,
    ...(args.only ? { only: args.only.split(',').map(Number) } : {}),
    udpPort: gw.fx.gateway.ports.UDP as number,
    tcpPort: gw.fx.gateway.ports.TCP as number,
    sources: gw.sources,
    probeSource: gw.probeSource,
    did: gw.did,
    rate: Number(args.rate),
    tcpShare: Number(args['tcp-share']),
    progressEvery: 5000,
    onProgress: (s) => console.log(`  ${s.sent} sent (${s.sentUdp} UDP, ${s.sentTcp} TCP), ${s.responses} answers [${byClass(s)}], 5xx ${s.serverErrors}, probes ${s.probesAnswered}/${s.probesSent}, error logs ${linesAt(gw.log, 'error', 'fatal').length}, ${((Date.now() - started) / 1000).toFixed(0)} s`),
  });
  const cpu = process.cpuUsage(cpuStart);
  const rfcFiveXx = [...stats.rfcRequired].map(([k, n]) => `${k}: ${n}`).join('; ') || 'none';
  const top = [...stats.byStatus].sort((a, b) => b[1] - a[1]).slice(0, 12).map(([c, n]) => `${c} ${n}`).join(', ');
  console.log(`\ncases sent: ${stats.sent} (UDP ${stats.sentUdp}, of which ${stats.tooBigForUdp} over 64 KiB not sendable; TCP ${stats.sentTcp}, ${stats.coalescedWrites} writes with several messages, ${stats.tcpClosedByGateway} connections closed by the gateway)`);
  console.log(`responses: ${stats.responses} [${byClass(stats)}]; most frequent: ${top}`);
  console.log(`5xx: ${stats.serverErrors} (apart from those RFC 3261 requires: ${rfcFiveXx})`);
  for (const f of stats.fiveXx.slice(0, 10)) console.log(`  ${f.status} ${f.reason} (case ${f.caseIndex ?? '?'}: replay with --only ${f.caseIndex ?? '?'})`);
  console.log(`crashes: ${stats.uncaughtExceptions} uncaught exceptions, ${stats.unhandledRejections} unhandled rejections; the process is alive`);
  for (const c of stats.crashSamples.slice(0, 5)) console.log(`  ${c}`);
  console.log(`liveness probes: ${stats.probesSent} sent, ${stats.probesAnswered} answered, ${stats.probesUnanswered} unanswered`);
  console.log(`error-level log records: ${linesAt(gw.log, 'error', 'fatal').length} (warn ${linesAt(gw.log, 'warn').length}, info ${linesAt(gw.log, 'info').length})`);
  const kinds = new Map<string, number>();
  for (const l of linesAt(gw.log, 'warn', 'error', 'fatal')) {
    const err = (l.err as { message?: string } | undefined)?.message;
    const kind = `${l.level}: ${l.msg}${err ? `: ${err.slice(0, 80)}` : ''}`;
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
  }
  for (const [k, n] of [...kinds].sort((a, b) => b[1] - a[1]).slice(0, 8)) console.log(`  ${n} x ${k}`);
  console.log(`requests the gateway sent to the fuzzer: ${stats.requestsFromGateway} (${[...stats.gatewayRequestMethods].map(([m, n]) => `${m} ${n}`).join(', ')}); RTP packets from answered calls ${stats.rtpPackets}; now: ${gw.fx.gateway.registry.size} calls, ${gw.fx.gateway.registry.inProgress} in set-up, ${gw.fx.media.openSessions} media sessions`);
  console.log(`wall ${((Date.now() - started) / 1000).toFixed(1)} s, CPU ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  await gw.fx.close();
  await stopTestPostgres();
  const failed = stats.serverErrors > 0 || stats.uncaughtExceptions + stats.unhandledRejections > 0 || stats.probesUnanswered > 0;
  process.exit(failed ? 1 : 0);
}

main().catch(async (error: unknown) => {
  console.error(error);
  await stopTestPostgres();
  process.exit(1);
});
