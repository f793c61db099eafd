import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { udpReceiveDrops } from '../../gateway/sip/transport/udp-drops.js';

export const scenarioDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../sipp-scenarios');

export interface SippOptions {
  /** File name in sipp-scenarios/. */
  readonly scenario: string;
  /** Gateway address, `127.0.0.1:5060`. */
  readonly target: string;
  readonly transport?: 'udp' | 'tcp';
  /** Source address of SIPp's packets (any 127.0.0.0/8 address works on Linux loopback). */
  readonly localIp?: string;
  /** Request-URI user (`[service]`). */
  readonly service?: string;
  readonly calls?: number;
  readonly rate?: number;
  /** `[key]` values: `caller` (From user) and `to_user` (To user, default the service) and any others. */
  readonly keys?: Readonly<Record<string, string>>;
  /** Hard bound: SIPp is killed after this, and the run fails. */
  readonly timeoutMs?: number;
  /** More SIPp arguments, e.g. `-nr` (no retransmissions). */
  readonly extraArgs?: readonly string[];
  /**
   * Per-message counts (`-trace_counts`) in the result. SIPp writes them beside the scenario file,
   * so the scenario is copied into the run's temporary directory and run from there: only for
   * scenarios that use no other file of sipp-scenarios/.
   */
  readonly traceCounts?: boolean;
  /**
   * Sample the kernel's receive drops on SIPp's own SIP socket while it runs (`receiveDrops`): a
   * flood's answers that SIPp's buffer overflowed on never reach its counts, through no fault of
   * the gateway.
   */
  readonly watchDrops?: boolean;
}

export interface SippResult {
  /** 0: every call succeeded; 1: some failed; 97/99/255...: see SIPp's manual (exit codes). */
  readonly exitCode: number | null;
  readonly successful: number;
  readonly failed: number;
  /** SIPp's error log (-trace_err): unexpected messages and why a call failed. */
  readonly errors: string;
  readonly stdout: string;
  readonly timedOut: boolean;
  /** With `traceCounts`: SIPp's final counters by column, e.g. `0_INVITE_Sent`, `3_503_Recv`, `4_200_Timeout`. */
  readonly counts?: Readonly<Record<string, number>>;
  /** With `watchDrops`: datagrams the kernel dropped on SIPp's SIP socket (its buffer was full). */
  readonly receiveDrops?: number;
  /** Messages for calls SIPp had already ended (an answer later than the scenario's timeout, its retransmissions), discarded. */
  readonly deadCallMessages: number;
}

/**
 * An even UDP port with the three above it free on `address` (SIPp's RTP/RTCP pairs), at least 4
 * away from `avoid`, below the kernel's ephemeral range (32768-60999) where any process's port-0
 * socket or outgoing connection may sit; `tcp`: the first port free for TCP too (SIPp's -t t1).
 */
export async function freeUdpPort(address: string, avoid?: number, tcp = false): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const base = 20_000 + 2 * Math.floor(Math.random() * 6_000);
    // The probe sockets are closed again: a second call could draw the same free range.
    if (avoid !== undefined && Math.abs(base - avoid) < 4) continue;
    const ok = await Promise.all([base, base + 1, base + 2, base + 3].map((p) => canBind(address, p)));
    if (ok.every(Boolean) && (!tcp || (await canListen(address, base)))) return base;
  }
  throw new Error('no free UDP port range for SIPp');
}

const canBind = (address: string, port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const s = createSocket('udp4');
    s.once('error', () => resolve(false));
    s.bind(port, address, () => s.close(() => resolve(true)));
  });

const canListen = (address: string, port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, address, () => server.close(() => resolve(true)));
  });

function counter(screen: string, label: string): number {
  // The final screen's statistics table: "  Successful call   |  0   |  1" (periodic and cumulative).
  const lines = screen.split('\n').filter((l) => l.includes(label));
  const last = lines[lines.length - 1];
  const numbers = last?.match(/\d+/g) ?? [];
  return Number(numbers[numbers.length - 1] ?? 0);
}

/**
 * Runs one SIPp scenario against the gateway, bounded in time, and reads its outcome. A port taken
 * between our check and SIPp's bind (another test's socket) makes SIPp exit before it sends
 * anything: that run is tried again on other ports, twice at most.
 */
export async function runSipp(options: SippOptions): Promise<SippResult> {
  for (let attempt = 1; ; attempt++) {
    const result = await runSippOnce(options);
    if (attempt < 3 && result.exitCode !== 0 && /Unable to bind main socket/.test(`${result.errors}\n${result.stdout}`)) continue;
    return result;
  }
}

async function runSippOnce(options: SippOptions): Promise<SippResult> {
  const work = mkdtempSync(path.join(tmpdir(), 'sipp-'));
  const localIp = options.localIp ?? '127.0.0.1';
  const sipPort = await freeUdpPort(localIp, undefined, options.transport === 'tcp');
  const mediaPort = await freeUdpPort(localIp, sipPort);
  const errorFile = path.join(work, 'errors.log');
  const screenFile = path.join(work, 'screen.log');
  const scenarioFile = options.traceCounts ? path.join(work, options.scenario) : path.join(scenarioDir, options.scenario);
  if (options.traceCounts) copyFileSync(path.join(scenarioDir, options.scenario), scenarioFile);
  const args = [
    options.target,
    '-sf', scenarioFile,
    '-t', options.transport === 'tcp' ? 't1' : 'u1',
    '-i', localIp,
    '-p', String(sipPort),
    '-mi', localIp,
    '-mp', String(mediaPort),
    '-m', String(options.calls ?? 1),
    '-r', String(options.rate ?? 10),
    '-l', String(options.calls ?? 1),
    '-s', options.service ?? 'service',
    '-nostdin',
    '-trace_err', '-error_file', errorFile,
    '-trace_screen', '-screen_file', screenFile,
    '-timeout', `${Math.ceil((options.timeoutMs ?? 20_000) / 1000)}s`, '-timeout_error',
  ];
  const keys = { caller: '+919800000001', to_user: options.service ?? 'service', ...options.keys };
  for (const [k, v] of Object.entries(keys)) args.push('-key', k, v);
  if (options.traceCounts) args.push('-trace_counts');
  args.push(...(options.extraArgs ?? []));
  const child = spawn('sipp', args, { cwd: options.traceCounts ? work : scenarioDir, stdio: ['ignore', 'pipe', 'pipe'] });
  // The socket's counter goes with it when SIPp exits: the last sample before that is the count.
  let receiveDrops: number | undefined;
  const sampler = options.watchDrops ? setInterval(() => (receiveDrops = udpReceiveDrops(localIp, sipPort) ?? receiveDrops), 50) : undefined;
  let stdout = '';
  child.stdout.on('data', (d: Buffer) => (stdout = (stdout + d.toString()).slice(-20_000)));
  child.stderr.on('data', (d: Buffer) => (stdout = (stdout + d.toString()).slice(-20_000)));
  let timedOut = false;
  const killer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, (options.timeoutMs ?? 20_000) + 5000);
  const exitCode = await new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  clearTimeout(killer);
  clearInterval(sampler);
  const screen = existsSync(screenFile) ? readFileSync(screenFile, 'utf8') : '';
  const errors = existsSync(errorFile) ? readFileSync(errorFile, 'utf8') : '';
  const counts = options.traceCounts ? readCounts(work) : undefined;
  rmSync(work, { recursive: true, force: true });
  return {
    exitCode,
    successful: counter(screen, 'Successful call'),
    failed: counter(screen, 'Failed call'),
    deadCallMessages: Number([...screen.matchAll(/(\d+) dead call msg \(discarded\)/g)].at(-1)?.[1] ?? 0),
    errors,
    stdout,
    timedOut,
    ...(counts ? { counts } : {}),
    ...(options.watchDrops ? { receiveDrops: receiveDrops ?? 0 } : {}),
  };
}

/**
 * UDP datagrams this machine's kernel lost since boot, from /proc/net/snmp: dropped for a full
 * receive buffer (RcvbufErrors) or sent to a port nobody listens on any more (NoPorts: an answer
 * that came after SIPp had exited). Counts every process's losses, so a difference over a test is
 * an upper bound on its own; undefined off Linux.
 */
export function udpKernelLosses(): number | undefined {
  try {
    const [names, values] = readFileSync('/proc/net/snmp', 'latin1').split('\n').filter((l) => l.startsWith('Udp:'));
    const field = (name: string): number => Number(values?.split(/\s+/)[names?.split(/\s+/).indexOf(name) ?? -1]);
    const lost = field('RcvbufErrors') + field('NoPorts');
    return Number.isFinite(lost) ? lost : undefined;
  } catch {
    return undefined;
  }
}

/** The last row of SIPp's `-trace_counts` CSV (cumulative counters), by column name. */
function readCounts(dir: string): Record<string, number> | undefined {
  const file = readdirSync(dir).find((f) => f.endsWith('_counts.csv'));
  if (!file) return undefined;
  const rows = readFileSync(path.join(dir, file), 'utf8').trim().split('\n');
  const header = (rows[0] ?? '').split(';');
  const last = (rows[rows.length - 1] ?? '').split(';');
  const out: Record<string, number> = {};
  header.forEach((name, i) => {
    if (/^\d+_/.test(name)) out[name] = Number(last[i] ?? 0);
  });
  return out;
}

/** Asserts SIPp ran its scenario to the end (exit 0) with `calls` successful calls; the failure shows SIPp's own account. */
export function expectSippSuccess(r: SippResult, calls = 1): void {
  assert.equal(r.exitCode, 0, `SIPp failed (exit ${r.exitCode}):\n${r.errors}\n${r.stdout.slice(-2000)}`);
  assert.equal(r.successful, calls);
}

/** Polls `cond` every 25 ms until it holds; throws after `ms` (a deadline, never a fixed sleep). */
export async function waitFor(cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}
