/**
 * How many concurrent bidirectional RTP sessions one process sustains.
 *
 * Each pair is two MediaSessions on 127.0.0.1 negotiated through offer/answer; both sides send
 * 50 packets/s of G.711 (a tone, encoded every tick) and the answering side decodes what it
 * receives through the jitter buffer into its `input` iterator (as the voice pipeline will).
 * The pair count grows stage by stage until 1% or more of packets are lost, or sent late (more than
 * 60 ms, the receiver's 3-packet jitter buffer, behind their due time, or skipped), or concealed at
 * our own receivers, or the time budget is used. The share sent more than 20 ms late is printed too.
 *
 *   node --import tsx bench/rtp-sessions.ts [--stages 50,100,200,400,800] [--seconds 8] [--budget 110]
 */
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { MediaService } from '../media/media-service.js';
import type { MediaSession } from '../media/media-session.js';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}

const stages = arg('stages', '50,100,200,400,600,800,1000,1200').split(',').map(Number);
const measureSeconds = Number(arg('seconds', '8'));
const budgetSeconds = Number(arg('budget', '110'));
const warmupMs = 1500;

const tone = Int16Array.from({ length: 8000 }, (_, i) => Math.round(6000 * Math.sin((2 * Math.PI * 440 * i) / 8000)));

interface Pair {
  readonly caller: MediaSession;
  readonly agent: MediaSession;
}

const service = new MediaService({
  bindAddress: '127.0.0.1',
  portMin: 20000,
  portMax: 29999,
  timeouts: { rtpTimeoutMs: 0 },
  receiveBufferBytes: 1 << 20,
});
const pairs: Pair[] = [];
let framesDecoded = 0;

async function addPair(): Promise<void> {
  const caller = await service.offer();
  const answer = await service.answer(caller.localSdp);
  if (!answer.ok) throw new Error(answer.message);
  caller.applyAnswer(answer.sdp);
  const agent = answer.session as MediaSession;
  pairs.push({ caller, agent });
  void (async () => {
    for await (const frame of agent.input) framesDecoded += frame.samples.length > 0 ? 1 : 0;
  })();
}

/** Keeps every sender's queue topped up so real audio (not idle silence) is encoded each tick. */
const feeder = setInterval(() => {
  for (const { caller, agent } of pairs) {
    if (caller.output.queuedMs < 500) caller.output.write(tone);
    if (agent.output.queuedMs < 500) agent.output.write(tone);
  }
}, 200);

function totals(): { sent: number; received: number; concealed: number } {
  let sent = 0;
  let received = 0;
  let concealed = 0;
  for (const { caller, agent } of pairs) {
    sent += caller.stats.packetsSent + agent.stats.packetsSent;
    received += caller.stats.packetsReceived + agent.stats.packetsReceived;
    // What a listener would notice: holes concealed at playout and packets too late to play.
    for (const s of [caller, agent]) concealed += s.jitterStats.missing + s.jitterStats.late;
  }
  return { sent, received, concealed };
}

interface StageResult {
  pairs: number;
  pps: number;
  lossPct: number;
  late20Pct: number;
  latePct: number;
  concealedPct: number;
  cpuPct: number;
  maxLagMs: number;
  tickBusyPct: number;
  rssMb: number;
  load: number;
}

async function runStage(target: number): Promise<StageResult> {
  while (pairs.length < target) await addPair();
  await new Promise((r) => setTimeout(r, warmupMs));
  const s = service.scheduler.stats;
  const before = { ...totals(), ticks: s.ticks, skipped: s.skippedTicks, over20: s.lagOver20Ms, over60: s.lagOver60Ms, cpu: process.cpuUsage(), at: performance.now() };
  const baseBusy = s.busyMs;
  s.maxLagMs = 0;
  await new Promise((r) => setTimeout(r, measureSeconds * 1000));
  // Let packets in flight land before counting them.
  const sentAt = totals().sent;
  await new Promise((r) => setTimeout(r, 100));
  const after = { ...totals(), ticks: s.ticks, skipped: s.skippedTicks, cpu: process.cpuUsage(before.cpu), at: performance.now() };
  const maxLag = s.maxLagMs;
  const elapsed = (after.at - before.at) / 1000;
  const sent = sentAt - before.sent;
  const received = after.received - before.received;
  const ticks = after.ticks - before.ticks;
  const skipped = after.skipped - before.skipped;
  return {
    pairs: target,
    pps: Math.round((sent + received) / elapsed),
    lossPct: sent > 0 ? Math.max(0, ((sent - received) / sent) * 100) : 0,
    concealedPct: received > 0 ? ((after.concealed - before.concealed) / received) * 100 : 0,
    late20Pct: ticks + skipped > 0 ? ((s.lagOver20Ms - before.over20 + skipped) / (ticks + skipped)) * 100 : 0,
    latePct: ticks + skipped > 0 ? ((s.lagOver60Ms - before.over60 + skipped) / (ticks + skipped)) * 100 : 0,
    cpuPct: ((after.cpu.user + after.cpu.system) / 1000 / (elapsed * 1000)) * 100,
    maxLagMs: maxLag,
    tickBusyPct: ((s.busyMs - baseBusy) / (elapsed * 1000)) * 100,
    load: loadavg()[0] ?? 0,
    rssMb: Math.round(process.memoryUsage().rss / 1048576),
  };
}

async function main(): Promise<void> {
  const started = performance.now();
  console.log(`bidirectional G.711 RTP on loopback, ${measureSeconds} s per stage, 50 pkt/s each way per pair`);
  console.log('CPU% is this process (100 = one core)');
  console.log(`host: ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), load average at start ${loadavg()[0]?.toFixed(2)}`);
  console.log('late = sent > 60 ms (the 3-packet jitter buffer) behind schedule, or skipped; >20ms% = more than one packet time late');
  console.log('concealed = holes and too-late packets at our own receivers; criterion: loss, late and concealed each < 1%');
  console.log('pairs  endpoints  packets/s(tx+rx)  loss%   late%  >20ms%  concealed%  maxLag ms   CPU%  tick busy%  RSS MB  load');
  let best: StageResult | undefined;
  for (const target of stages) {
    const estimate = (measureSeconds + warmupMs / 1000 + 1) * 1000;
    if (performance.now() - started + estimate > budgetSeconds * 1000) {
      console.log(`(time budget reached before ${target} pairs)`);
      break;
    }
    const r = await runStage(target);
    console.log(
      `${String(r.pairs).padStart(5)}  ${String(r.pairs * 2).padStart(9)}  ${String(r.pps).padStart(16)}  ${r.lossPct.toFixed(2).padStart(5)}  ${r.latePct.toFixed(2).padStart(6)}  ${r.late20Pct.toFixed(2).padStart(6)}  ${r.concealedPct.toFixed(2).padStart(10)}  ${r.maxLagMs.toFixed(1).padStart(9)}  ${r.cpuPct.toFixed(0).padStart(5)}  ${r.tickBusyPct.toFixed(1).padStart(10)}  ${String(r.rssMb).padStart(6)}  ${r.load.toFixed(1).padStart(4)}`,
    );
    if (r.lossPct >= 1 || r.latePct >= 1 || r.concealedPct >= 1) {
      console.log(`stopped: ${r.pairs} pairs exceed 1% lost or late packets`);
      break;
    }
    best = r;
  }
  console.log(
    best
      ? `sustained: ${best.pairs} pairs (${best.pairs * 2} RTP endpoints, ${best.pps} packets/s) with < 1% lost/late at ${best.cpuPct.toFixed(0)}% of one core`
      : 'no stage met the < 1% criterion',
  );
  console.log(`frames decoded by agents: ${framesDecoded}`);
  clearInterval(feeder);
  await service.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
