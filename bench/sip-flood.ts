/**
 * INVITE flood from one source while another source's OPTIONS monitor keeps asking (issue 12).
 *
 * The gateway runs in this process on the test harness (PostgreSQL private cluster, a trunk from
 * 127.0.0.1, its DID, ring time 0, abuse settings as configured by default). SIPp floods INVITEs
 * from 127.0.0.1 at --rate for --seconds with retransmissions off (-nr), so each INVITE is sent
 * once and ends answered (200, then BYE), refused (503) or unanswered within 3 s (dropped); SIPp's
 * own per-message counts (-trace_counts) give those figures. A child process sends an OPTIONS from
 * 127.0.0.2 every --probe-ms and times each 200 (hrtime, no retransmission: a probe without an
 * answer in 2 s is lost). Printed: flood offered/s, answered/refused/dropped per second, OPTIONS
 * latency p50/p99/max and losses, and this process's CPU (gateway + PostgreSQL client) during the
 * flood and its 3 s tail.
 *
 *   node --import tsx bench/sip-flood.ts [--rate 2000] [--seconds 5] [--probe-ms 100] [--probe-ua "sipsak 0.9.8.1"] [--retrans]
 *     [--source-rate 50] [--source-burst 100] [--refusal-rate 5000]   (sip.abuse.*; the defaults when absent)
 */
import { fork, spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const scenario = 'uac-invite-flood-expect-answer-or-503.xml';

const { values: args } = parseArgs({
  options: {
    rate: { type: 'string', default: '2000' },
    seconds: { type: 'string', default: '5' },
    'probe-ms': { type: 'string', default: '100' },
    'probe-ua': { type: 'string', default: 'Kamailio dispatcher probe' },
    retrans: { type: 'boolean', default: false },
    'source-rate': { type: 'string' },
    'source-burst': { type: 'string' },
    'refusal-rate': { type: 'string' },
    probe: { type: 'string' },
  },
});

interface ProbeResult {
  readonly sent: number;
  readonly latenciesMs: readonly number[];
  /** Per answered probe: ms since the first probe was sent, and its latency. */
  readonly timeline: ReadonlyArray<readonly [number, number]>;
}

/* ---------------- child: the OPTIONS monitor on 127.0.0.2 ---------------- */

async function probe(port: number, everyMs: number, ua: string): Promise<void> {
  const socket = createSocket('udp4');
  await new Promise<void>((r) => socket.bind(0, '127.0.0.2', r));
  const local = socket.address().port;
  const pending = new Map<string, bigint>();
  const latencies: number[] = [];
  const timeline: Array<[number, number]> = [];
  const first = process.hrtime.bigint();
  let sent = 0;
  socket.on('message', (buf) => {
    const text = buf.toString('latin1');
    const callId = /\r\nCall-ID:\s*([^\r]+)/i.exec(text)?.[1];
    const at = callId === undefined ? undefined : pending.get(callId);
    if (at === undefined || !text.startsWith('SIP/2.0 200 ')) return;
    pending.delete(callId as string);
    const ms = Number(process.hrtime.bigint() - at) / 1e6;
    latencies.push(ms);
    timeline.push([Number(at - first) / 1e6, ms]);
    process.send?.({ answered: ms });
  });
  const timer = setInterval(() => {
    const callId = `probe-${++sent}-${process.pid}`;
    const text =
      `OPTIONS sip:ping@127.0.0.1:${port} SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.2:${local};branch=z9hG4bK-${callId};rport\r\n` +
      `From: <sip:monitor@127.0.0.2>;tag=${sent}\r\nTo: <sip:ping@127.0.0.1>\r\nCall-ID: ${callId}\r\nCSeq: 1 OPTIONS\r\n` +
      `Max-Forwards: 70\r\nUser-Agent: ${ua}\r\nContent-Length: 0\r\n\r\n`;
    pending.set(callId, process.hrtime.bigint());
    socket.send(text, port, '127.0.0.1');
  }, everyMs);
  process.on('message', () => {
    clearInterval(timer);
    // Whatever is still pending after 2 s is lost.
    setTimeout(() => {
      process.send?.({ done: { sent, latenciesMs: latencies, timeline } satisfies ProbeResult }, () => process.exit(0));
    }, 2000);
  });
  // A parent that dies (Ctrl-C, a closed pipe) takes the monitor with it.
  process.once('disconnect', () => process.exit(0));
  process.send?.({ ready: true });
}

/** What main started, stopped on every way out (error, signal, closed stdout), so nothing is left running. */
const started: { children: Array<{ kill(signal?: NodeJS.Signals): boolean }>; stop: Array<() => Promise<void>> } = { children: [], stop: [] };
async function cleanUp(): Promise<void> {
  for (const c of started.children.splice(0)) c.kill('SIGKILL');
  for (const stop of started.stop.splice(0).reverse()) await stop().catch(() => undefined);
}

/* ---------------- parent ---------------- */

interface FloodCounts {
  invites: number;
  retransmissions: number;
  answered: number;
  refused: number;
  unanswered: number;
  unfinished: number;
  unexpected: number;
}

/** SIPp's -trace_counts CSV: per scenario line, cumulative counters (last row = end of run). */
function readCounts(dir: string): FloodCounts | undefined {
  const file = readdirSync(dir).find((f) => f.endsWith('_counts.csv'));
  if (!file) return undefined;
  const rows = readFileSync(path.join(dir, file), 'utf8').trim().split('\n');
  if (rows.length < 2) return undefined;
  const header = (rows[0] ?? '').split(';');
  const last = (rows[rows.length - 1] ?? '').split(';');
  const col = (name: string): number => Number(last[header.indexOf(name)] ?? 0);
  // Columns are "<index>_<message>_<counter>", e.g. 0_INVITE_Sent, 3_503_Recv, 4_200_Timeout.
  return {
    invites: col('0_INVITE_Sent'),
    retransmissions: col('0_INVITE_Retrans'),
    answered: col('4_200_Recv'),
    refused: col('3_503_Recv'),
    unanswered: col('1_100_Timeout'),
    unfinished: col('2_180_Timeout') + col('3_503_Timeout') + col('4_200_Timeout'),
    unexpected: header.reduce((n, h, i) => n + (h.endsWith('_Unexp') ? Number(last[i] ?? 0) : 0), 0),
  };
}

const pct = (sorted: readonly number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

async function main(): Promise<void> {
  const rate = Number(args.rate);
  const seconds = Number(args.seconds);
  const probeMs = Number(args['probe-ms']);
  const { startGatewayFixture, numbers } = await import('../test/gateway/gateway-harness.js');
  const { stopTestPostgres } = await import('../test/helpers/postgres-cluster.js');
  const { scenarioDir } = await import('../test/helpers/sipp.js');
  // Calls per number and tenant high enough that admitted flood calls meet only the abuse limits.
  const abuse = {
    ...(args['source-rate'] ? { perSourceRate: Number(args['source-rate']) } : {}),
    ...(args['source-burst'] ? { perSourceBurst: Number(args['source-burst']) } : {}),
    ...(args['refusal-rate'] ? { refusalRate: Number(args['refusal-rate']) } : {}),
  };
  started.stop.push(stopTestPostgres);
  const fx = await startGatewayFixture({ ringMs: 0, maxCallsPerNumber: 100_000, maxCallsPerTenant: 100_000, abuse });
  started.stop.push(() => fx.close());
  const port = fx.gateway.ports.UDP as number;
  const prober = fork(fileURLToPath(import.meta.url), ['--probe', `${port},${probeMs},${args['probe-ua']}`], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  started.children.push(prober);
  let answeredProbes = 0;
  const probeDone = new Promise<ProbeResult>((resolve) => {
    prober.on('message', (m: { answered?: number; done?: ProbeResult }) => {
      if (m.answered !== undefined) answeredProbes++;
      if (m.done) resolve(m.done);
    });
  });
  await new Promise<void>((resolve) => prober.once('message', () => resolve()));

  const work = mkdtempSync(path.join(tmpdir(), 'vap-sip-flood-'));
  copyFileSync(path.join(scenarioDir, scenario), path.join(work, scenario));
  const calls = rate * seconds;
  console.log(`flood: ${calls} INVITEs at ${rate}/s from 127.0.0.1 for ${seconds} s; OPTIONS every ${probeMs} ms from 127.0.0.2 (User-Agent "${args['probe-ua']}"); abuse settings ${JSON.stringify(abuse)} (else defaults); load average ${loadavg()[0]?.toFixed(2)}`);
  const cpu0 = process.cpuUsage();
  const t0 = Date.now();
  const sipp = spawn('sipp', [
    fx.target, '-sf', path.join(work, scenario), '-t', 'u1', '-i', '127.0.0.1', '-p', String(36_000 + 2 * Math.floor(Math.random() * 1000)),
    '-mi', '127.0.0.1', '-mp', String(38_000 + 2 * Math.floor(Math.random() * 1000)),
    '-m', String(calls), '-r', String(rate), '-l', String(rate * 5), '-s', numbers.trunkDid,
    '-key', 'caller', '+919800000001', '-key', 'to_user', numbers.trunkDid,
    ...(args.retrans ? [] : ['-nr']), '-nostdin', '-buff_size', '4194304', '-trace_counts', '-fd', '1', '-timeout', `${seconds + 30}s`,
  ], { cwd: work, stdio: ['ignore', 'ignore', 'pipe'] });
  started.children.push(sipp);
  let sippErr = '';
  sipp.stderr.on('data', (d: Buffer) => (sippErr = (sippErr + d.toString()).slice(-4000)));
  let lastCpu = cpu0;
  // The gateway's own view, where it has one (vap_sip_requests_shed_total): refusals and drops per second.
  const { metricsRegistry } = await import('../core/metrics.js');
  const shedTotal = async (action: string): Promise<number | undefined> => {
    const metric = metricsRegistry.getSingleMetric('vap_sip_requests_shed_total') as { get(): Promise<{ values: Array<{ value: number; labels: Record<string, string | number> }> }> } | undefined;
    if (!metric) return undefined;
    return (await metric.get()).values.filter((v) => v.labels['action'] === action).reduce((n, v) => n + v.value, 0);
  };
  let lastShed = { refused: (await shedTotal('refused')) ?? 0, dropped: (await shedTotal('dropped')) ?? 0 };
  const progress = setInterval(() => {
    const now = process.cpuUsage();
    const used = (now.user - lastCpu.user + now.system - lastCpu.system) / 1e6;
    lastCpu = now;
    void Promise.all([shedTotal('refused'), shedTotal('dropped')]).then(([refused, dropped]) => {
      const shedText = refused === undefined || dropped === undefined ? 'no shed counters' : `refused ${refused - lastShed.refused}, dropped ${dropped - lastShed.dropped} before parsing`;
      lastShed = { refused: refused ?? 0, dropped: dropped ?? 0 };
      console.log(`  t=${((Date.now() - t0) / 1000).toFixed(0)} s  gateway CPU ${(used * 100).toFixed(0)}%, last second: ${shedText}; OPTIONS answered so far ${answeredProbes}`);
    });
  }, 1000);
  let timedOut = false;
  const killer = setTimeout(() => {
    timedOut = true;
    sipp.kill('SIGKILL');
  }, (seconds + 40) * 1000);
  const code = await new Promise<number | null>((resolve) => sipp.once('exit', (c) => resolve(c)));
  clearTimeout(killer);
  const wall = (Date.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  clearInterval(progress);
  prober.send('stop');
  const probes = await probeDone;
  const counts = readCounts(work);
  rmSync(work, { recursive: true, force: true });
  if (timedOut || !counts) throw new Error(`SIPp did not finish (exit ${code}): ${sippErr}`);
  await cleanUp();

  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  const sorted = [...probes.latenciesMs].sort((a, b) => a - b);
  const perSecond = (n: number): string => (n / seconds).toFixed(0);
  console.log(`\nSIPp exit ${code}; flood window ${seconds} s, run ${wall.toFixed(1)} s (with 3 s answer timeouts)`);
  console.log(`flood offered   ${counts.invites} INVITEs (${perSecond(counts.invites)}/s), ${counts.retransmissions} retransmissions`);
  console.log(`  answered 200  ${counts.answered} (${perSecond(counts.answered)}/s)`);
  console.log(`  refused 503   ${counts.refused} (${perSecond(counts.refused)}/s)`);
  console.log(`  no answer     ${counts.unanswered} (${perSecond(counts.unanswered)}/s)`);
  console.log(`  provisional only ${counts.unfinished} (100/180 but no final answer in 3 s)`);
  console.log(`  unexpected    ${counts.unexpected} (other statuses or late answers)`);
  console.log(`OPTIONS from 127.0.0.2: ${probes.sent} sent, ${sorted.length} answered 200, ${probes.sent - sorted.length} lost; latency p50 ${pct(sorted, 50).toFixed(2)} ms, p99 ${pct(sorted, 99).toFixed(2)} ms, max ${(sorted[sorted.length - 1] ?? NaN).toFixed(2)} ms`);
  const slow = probes.timeline.filter(([, ms]) => ms > 20).map(([at, ms]) => `${(at / 1000).toFixed(1)} s: ${ms.toFixed(0)} ms`);
  console.log(`OPTIONS slower than 20 ms (when sent, after the first probe): ${slow.join(', ') || 'none'}`);
  console.log(`gateway process CPU: ${cpuSeconds.toFixed(2)} s (user ${(cpu.user / 1e6).toFixed(2)}, system ${(cpu.system / 1e6).toFixed(2)}) over ${wall.toFixed(1)} s (${((cpuSeconds / wall) * 100).toFixed(0)}% of one core), ${((cpuSeconds * 1e6) / Math.max(1, counts.answered + counts.refused)).toFixed(0)} µs per INVITE answered or refused`);
}

if (args.probe !== undefined) {
  const [port, everyMs, ...ua] = args.probe.split(',');
  void probe(Number(port), Number(everyMs), ua.join(','));
} else {
  const stop = (code: number) => (): void => void cleanUp().finally(() => process.exit(code));
  process.once('SIGINT', stop(130));
  process.once('SIGTERM', stop(143));
  // `| head` closing the pipe must not leave SIPp, the monitor and PostgreSQL behind.
  process.stdout.on('error', stop(1));
  void main().then(stop(0), (error: unknown) => {
    console.error(error);
    stop(1)();
  });
}
