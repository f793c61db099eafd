/**
 * SIP UAS load: our stack core (transports, transactions, dialogs) as a plain answering UAS against
 * the reference UAS on npm `sip` 0.0.6 (bench/reference-uas-sip006.mjs), both driven by SIPp's
 * built-in `uac` scenario (INVITE, 200 with SDP, ACK, BYE, 200) at rising rates until a step fails
 * (failed calls or retransmissions above 1% of calls, or SIPp could not reach 90% of the rate).
 * Each server runs in its own process and reports its CPU time (process.cpuUsage) over IPC, so the
 * table shows calls/s and calls per CPU-second side by side. A step's CPU window runs from its
 * start until `--tail` seconds (default 34: Timers J/L are 64*T1 = 32 s) after the last step of
 * that rate, so it holds everything a call costs, including the transaction state kept for the
 * RFC wait timers, its expiry and its garbage collection, and nothing of another rate's calls.
 * `--repeat N` runs the whole ramp N times with fresh servers and sums up all runs at the end.
 * Both servers run plain JavaScript: ours is bundled from this file by esbuild (the compiler tsx
 * uses) at start; `--tsx` runs it under the tsx loader instead, whose module-hook thread alone
 * costs a few ms of CPU per second even when idle. The plain UAS does not load the media service
 * (nor, with it, the process-wide Prometheus collectors), as the reference loads nothing extra.
 * Then: how many concurrent calls with RTP both ways (SIPp rtp_stream in, our echo out) the
 * gateway's stack + MediaService hold with no lost call (`--rtp 0` skips it).
 *
 *   node --import tsx bench/sip-uas-load.ts [--rates 200,500,1000,...] [--seconds 8] [--tail 34] [--repeat 1] [--tsx] [--rtp 50,100,200,...]
 */
import { spawn, fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { pino } from 'pino';
import { systemClock } from '../core/clock.js';
import { Dialog } from '../gateway/sip/dialog/dialog.js';
import { TransportSet } from '../gateway/sip/transport/transport-set.js';
import type { ServerRequest } from '../gateway/sip/ua/server-request.js';
import { SipStack } from '../gateway/sip/ua/sip-stack.js';
import type { MediaService } from '../media/media-service.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? (process.argv[i + 1] ?? fallback) : fallback;
};
const SDP = ['v=0', 'o=- 1 1 IN IP4 127.0.0.1', 's=-', 'c=IN IP4 127.0.0.1', 't=0 0', 'm=audio 40000 RTP/AVP 0', 'a=rtpmap:0 PCMU/8000', ''].join('\r\n');

interface ServerStats {
  cpu: NodeJS.CpuUsage;
  answered: number;
  withAudio?: number;
  framesIn?: number;
  framesOut?: number;
  maxConcurrent?: number;
  refused?: number;
}

/* ---------------- child processes: the servers ---------------- */

async function serveOurs(port: number, withMedia: boolean): Promise<void> {
  const logger = pino({ level: 'silent' });
  const stack = new SipStack({ clock: systemClock, logger, publicAddress: '127.0.0.1' });
  const media = withMedia ? new (await import('../media/media-service.js')).MediaService({ bindAddress: '127.0.0.1', portMin: 20_000, portMax: 29_999, logger }) : undefined;
  const stats = { answered: 0, withAudio: 0, framesIn: 0, framesOut: 0, maxConcurrent: 0, refused: 0, live: 0 };
  // The plain UAS answers synchronously (no promise per request), as a lean answering handler would.
  const plain = (sreq: ServerRequest): void => {
    if (sreq.request.method === 'OPTIONS') return stack.answerOptions(sreq);
    if (sreq.request.method !== 'INVITE') return void sreq.respond(405);
    Dialog.fromInvite(stack, sreq).accept(sreq, SDP);
    stats.answered += 1;
  };
  const withAudio = async (sreq: ServerRequest, service: MediaService): Promise<void> => {
    if (sreq.request.method !== 'INVITE') return plain(sreq);
    const answer = await service.answer(sreq.request.body.toString('utf8'));
    if (!answer.ok) {
      stats.refused += 1;
      return void sreq.respond(answer.sipStatus);
    }
    const dialog = Dialog.fromInvite(stack, sreq);
    dialog.accept(sreq, answer.sdp);
    stats.answered += 1;
    stats.live += 1;
    stats.maxConcurrent = Math.max(stats.maxConcurrent, stats.live);
    const session = answer.session;
    let frames = 0;
    dialog.on('destroy', () => {
      stats.live -= 1;
      if (frames >= 25) stats.withAudio += 1;
      void session.close();
    });
    // Echo: what the caller sends goes straight back, so RTP flows both ways on every call.
    for await (const frame of session.input) {
      if (frame.concealed) continue;
      frames += 1;
      stats.framesIn += 1;
      session.output.write(frame.samples);
      stats.framesOut += 1;
    }
  };
  stack.onRequest(media ? (sreq) => withAudio(sreq, media) : plain);
  const transports = await TransportSet.start({ host: '127.0.0.1', port, receiveBufferBytes: 8 * 1024 * 1024 }, stack.receive);
  stack.attach(transports);
  process.on('message', (m) => {
    if (m === 'stats') process.send?.({ cpu: process.cpuUsage(), ...stats } satisfies ServerStats);
    if (m === 'stop') process.exit(0);
  });
  // Exit cleanly on a signal so `node --cpu-prof` can write its profile.
  process.once('SIGINT', () => process.exit(0));
  process.send?.({ ready: port });
}

/* ---------------- parent: SIPp runs and the table ---------------- */

/** Our server as plain JavaScript: this file bundled (packages stay external, so node_modules resolves). */
let bundled: string | undefined;
async function bundleOurs(): Promise<string> {
  const dir = path.join(here, '../node_modules/.cache/sip-uas-load');
  mkdirSync(dir, { recursive: true });
  const outfile = path.join(dir, 'serve.mjs');
  await build({ entryPoints: [fileURLToPath(import.meta.url)], bundle: true, packages: 'external', platform: 'node', format: 'esm', target: 'node20', outfile, logLevel: 'warning' });
  return outfile;
}

function startServer(kind: 'ours' | 'reference' | 'media', port: number): Promise<ChildProcess> {
  const stdio: ['ignore', 'inherit', 'inherit', 'ipc'] = ['ignore', 'inherit', 'inherit', 'ipc'];
  const child =
    kind === 'reference'
      ? fork(path.join(here, 'reference-uas-sip006.mjs'), [String(port)], { stdio })
      : bundled
        ? fork(bundled, ['--serve', kind, String(port)], { execArgv: [], stdio })
        : fork(fileURLToPath(import.meta.url), ['--serve', kind, String(port)], { execArgv: ['--import', 'tsx'], stdio });
  return new Promise((resolve, reject) => {
    child.once('message', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`${kind} server exited (${code})`)));
  });
}

const ask = (child: ChildProcess): Promise<ServerStats> =>
  new Promise((resolve) => {
    child.once('message', (m) => resolve(m as ServerStats));
    child.send('stats');
  });

interface SippFigures {
  successful: number;
  failed: number;
  retransmissions: number;
  callRate: number;
  wallMs: number;
}

async function runSipp(target: number, args: string[], timeoutS: number): Promise<SippFigures> {
  const work = mkdtempSync(path.join(tmpdir(), 'sipp-bench-'));
  const stat = path.join(work, 'stat.csv');
  const started = Date.now();
  const child = spawn('sipp', [`127.0.0.1:${target}`, '-i', '127.0.0.1', '-p', String(41_000 + Math.floor(Math.random() * 2000) * 2), '-nostdin', '-trace_stat', '-stf', stat, '-fd', '1', '-timeout', `${timeoutS}s`, ...args], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('exit', resolve));
  const wallMs = Date.now() - started;
  const lines = existsSync(stat) ? readFileSync(stat, 'utf8').trim().split('\n') : [];
  rmSync(work, { recursive: true, force: true });
  const head = (lines[0] ?? '').split(';');
  const last = (lines[lines.length - 1] ?? '').split(';');
  const col = (name: string): number => Number(last[head.indexOf(name)] ?? 0);
  return { successful: col('SuccessfulCall(C)'), failed: col('FailedCall(C)'), retransmissions: col('Retransmissions(C)'), callRate: col('CallRate(C)'), wallMs };
}

interface Step {
  rate: number;
  sipp: SippFigures;
  cpuS: number;
  ok: boolean;
  /** More than 10% of the calls failed or never completed: the server is past its ceiling. */
  overloaded: boolean;
  why: string;
}

type Kind = 'ours' | 'reference';

const cpuSeconds = (before: ServerStats, after: ServerStats): number => (after.cpu.user + after.cpu.system - before.cpu.user - before.cpu.system) / 1e6;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** One SIPp run against a server; `cpuS` is filled in by the caller once the rate's tail is over. */
async function step(server: ChildProcess, port: number, rate: number, seconds: number): Promise<{ before: ServerStats; sipp: SippFigures }> {
  const before = await ask(server);
  const calls = rate * seconds;
  const sipp = await runSipp(port, ['-sn', 'uac', '-r', String(rate), '-m', String(calls), '-d', '0', '-max_recv_loops', '5000', '-max_sched_loops', '5000'], seconds + 20);
  return { before, sipp };
}

function judge(kind: Kind, rate: number, seconds: number, sipp: SippFigures, cpuS: number): Step {
  const calls = rate * seconds;
  const done = sipp.successful + sipp.failed;
  const why =
    sipp.failed > 0.01 * calls ? `${sipp.failed} failed calls`
    : sipp.retransmissions > 0.01 * calls ? `${sipp.retransmissions} retransmissions`
    : done < calls ? `${calls - done} calls never completed`
    : sipp.wallMs > (seconds / 0.9) * 1000 + 3000 ? `rate not reached (${(calls / (sipp.wallMs / 1000)).toFixed(0)}/s over the run)`
    : '';
  process.stdout.write(`  ${kind.padEnd(9)} ${String(rate).padStart(5)}/s: ${sipp.successful} ok, ${sipp.failed} failed, ${sipp.retransmissions} retrans, server CPU ${cpuS.toFixed(2)} s (${perCallUs({ sipp, cpuS }).toFixed(0)} us/call)${why ? `  <- ${why}` : ''}\n`);
  return { rate, sipp, cpuS, ok: why === '', overloaded: calls - sipp.successful > 0.1 * calls, why };
}

const perCallUs = (s: { sipp: SippFigures; cpuS: number }): number => (s.cpuS * 1e6) / Math.max(1, s.sipp.successful);

/**
 * Both servers up at once, warmed up (JIT) with an uncounted run and its tail, then each rate is
 * run against both back to back (which goes first alternates), so both see the same machine load;
 * both windows close after the tail. A step with retransmissions above 1% fails (it is left out of
 * the comparison) but the server keeps climbing; it stops after a step with over 10% lost calls.
 */
async function ramp(rates: number[], seconds: number, tailS: number): Promise<Record<Kind, Step[]>> {
  const ports: Record<Kind, number> = { ours: 35_060, reference: 36_060 };
  const servers = { ours: await startServer('ours', ports.ours), reference: await startServer('reference', ports.reference) };
  const steps: Record<Kind, Step[]> = { ours: [], reference: [] };
  try {
    for (const kind of ['ours', 'reference'] as const) await runSipp(ports[kind], ['-sn', 'uac', '-r', '500', '-m', '1500', '-d', '0'], 20);
    await sleep(tailS * 1000);
    for (const [i, rate] of rates.entries()) {
      const order: Kind[] = i % 2 === 0 ? ['ours', 'reference'] : ['reference', 'ours'];
      const running = order.filter((kind) => !steps[kind].some((s) => s.overloaded));
      if (running.length === 0) break;
      const started: Array<{ kind: Kind; before: ServerStats; sipp: SippFigures }> = [];
      for (const kind of running) started.push({ kind, ...(await step(servers[kind], ports[kind], rate, seconds)) });
      await sleep(tailS * 1000);
      for (const s of started) steps[s.kind].push(judge(s.kind, rate, seconds, s.sipp, cpuSeconds(s.before, await ask(servers[s.kind]))));
      printRatio(steps, rate);
    }
  } finally {
    servers.ours.kill();
    servers.reference.kill();
  }
  return steps;
}

/** The caller scenario from sipp-scenarios/ with a longer hold and the audio looped for the whole call. */
function rtpScenario(holdMs: number): { dir: string; file: string } {
  const source = readFileSync(path.join(here, '../sipp-scenarios/uac-invite-expect-200-caller-bye.xml'), 'utf8');
  const dir = mkdtempSync(path.join(tmpdir(), 'sipp-rtp-'));
  const file = path.join(dir, 'uac-rtp-hold.xml');
  writeFileSync(file, source.replace(/<pause milliseconds="\d+"\/>/, `<pause milliseconds="${holdMs}"/>`).replace('caller.wav,1,0', `${path.join(here, '../sipp-scenarios/caller.wav')},-1,0`));
  return { dir, file };
}

async function rtpStages(stages: number[], holdMs: number): Promise<Array<{ calls: number; lost: number; stats: ServerStats; cpuS: number; sipp: SippFigures }>> {
  const port = 37_060;
  const { dir, file } = rtpScenario(holdMs);
  const out = [];
  try {
    for (const n of stages) {
      const server = await startServer('media', port);
      const before = await ask(server);
      const rate = Math.max(1, Math.round(n / 2));
      const sipp = await runSipp(port, ['-sf', file, '-r', String(rate), '-m', String(n), '-l', String(n), '-s', '+914440000001', '-key', 'caller', '+919800000001', '-key', 'to_user', '+914440000001', '-mi', '127.0.0.1', '-mp', '50000'], Math.ceil(holdMs / 1000) + 30);
      await new Promise((r) => setTimeout(r, 500));
      const stats = await ask(server);
      server.kill();
      const cpuS = (stats.cpu.user + stats.cpu.system - before.cpu.user - before.cpu.system) / 1e6;
      const lost = n - Math.min(sipp.successful, stats.withAudio ?? 0);
      // Every call should have carried ~holdMs of audio each way; under 90% of it counts as a failed stage.
      const audioShare = (stats.framesIn ?? 0) / (n * (holdMs / 20));
      const failed = lost > 0 || audioShare < 0.9;
      out.push({ calls: n, lost: failed ? Math.max(lost, 1) : 0, stats, cpuS, sipp });
      process.stdout.write(`  rtp ${String(n).padStart(5)} calls: ${sipp.successful} ok, ${sipp.failed} failed, peak ${stats.maxConcurrent} concurrent, ${stats.withAudio} with audio, frames in/out ${stats.framesIn}/${stats.framesOut} (${(audioShare * 100).toFixed(0)}% of the held audio), server CPU ${cpuS.toFixed(1)} s${lost ? `  <- ${lost} lost` : audioShare < 0.9 ? '  <- audio short' : ''}\n`);
      if (failed) break;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

/** Ours / reference CPU per successful call at one rate; undefined unless both completed cleanly. */
function ratioAt(steps: Record<Kind, Step[]>, rate: number): number | undefined {
  const a = steps.ours.find((s) => s.rate === rate);
  const b = steps.reference.find((s) => s.rate === rate);
  return a?.ok && b?.ok ? perCallUs(a) / perCallUs(b) : undefined;
}

function printRatio(steps: Record<Kind, Step[]>, rate: number): void {
  const r = ratioAt(steps, rate);
  process.stdout.write(`  ${String(rate).padStart(5)}/s: ours/reference CPU per call ${r === undefined ? '- (a step failed)' : r.toFixed(2)}\n`);
}

function printRun(steps: Record<Kind, Step[]>, rates: number[], seconds: number): void {
  const { ours, reference } = steps;
  const row = (s: Step | undefined): string => (s ? `${(s.sipp.successful / seconds).toFixed(0).padStart(6)} ${s.cpuS.toFixed(2).padStart(6)} ${(s.sipp.successful / Math.max(s.cpuS, 0.001)).toFixed(0).padStart(7)} ${s.ok ? 'ok  ' : 'FAIL'}` : '     -      -       -     ');
  console.log('\nrate/s | ours: calls/s  CPU s  calls/CPU-s      | sip 0.0.6: calls/s  CPU s  calls/CPU-s | ours/ref CPU per call');
  for (const rate of rates) {
    const a = ours.find((s) => s.rate === rate);
    const b = reference.find((s) => s.rate === rate);
    if (!a && !b) break;
    const r = ratioAt(steps, rate);
    console.log(`${String(rate).padStart(6)} | ${row(a)}       | ${row(b)}           | ${r === undefined ? '-' : r.toFixed(2)}`);
  }
  const best = (list: Step[]): number => Math.max(0, ...list.filter((s) => s.ok).map((s) => s.rate));
  console.log(`highest clean rate: ours ${best(ours)}/s, sip 0.0.6 ${best(reference)}/s`);
}

async function main(): Promise<void> {
  const rates = arg('rates', '200,500,1000,2000,3000,4000,5000,6000').split(',').map(Number);
  const seconds = Number(arg('seconds', '8'));
  const tailS = Number(arg('tail', '34'));
  const repeat = Number(arg('repeat', '1'));
  const rtp = arg('rtp', '100,200,400,600,800,1000').split(',').map(Number).filter((n) => n > 0);
  const holdMs = Number(arg('hold', '8000'));
  if (!process.argv.includes('--tsx')) bundled = await bundleOurs();
  console.log(`SIP UAS load on ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), SIPp uac scenario, ${seconds} s per step, ${tailS} s tail per rate, ours ${bundled ? 'bundled by esbuild' : 'under tsx'}`);
  const ratios: number[] = [];
  let compared = 0;
  for (let run = 1; run <= repeat; run++) {
    if (repeat > 1) console.log(`\nrun ${run} of ${repeat}`);
    const steps = await ramp(rates, seconds, tailS);
    printRun(steps, rates, seconds);
    for (const rate of rates) {
      const r = ratioAt(steps, rate);
      if (r !== undefined) ratios.push(r);
      if (steps.ours.some((s) => s.rate === rate) || steps.reference.some((s) => s.rate === rate)) compared += 1;
    }
  }
  const below = ratios.filter((r) => r < 1).length;
  console.log(
    ratios.length === 0
      ? '\nsummary: no rate completed cleanly on both servers'
      : `\nsummary: ours/reference CPU per call ${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)} (mean ${(ratios.reduce((a, b) => a + b, 0) / ratios.length).toFixed(2)}) over ${ratios.length} rate steps both completed cleanly (of ${compared} rate steps run); below 1.0 at ${below} of ${ratios.length}`,
  );
  if (rtp.length === 0) return;
  console.log('\nconcurrent calls with RTP both ways (SIPp rtp_stream in, echo out), held', holdMs, 'ms:');
  const stages = await rtpStages(rtp, holdMs);
  const held = Math.max(0, ...stages.filter((s) => s.lost === 0).map((s) => s.stats.maxConcurrent ?? 0));
  console.log(`held with no lost call and at least 90% of the audio: ${held} concurrent calls`);
}

const serve = process.argv.indexOf('--serve');
if (serve > 0) {
  const kind = process.argv[serve + 1];
  void serveOurs(Number(process.argv[serve + 2]), kind === 'media');
} else {
  await main();
}
