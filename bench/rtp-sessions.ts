/**
 * How many concurrent bidirectional RTP sessions one process sustains.
 *
 * Each pair is two MediaSessions on 127.0.0.1 negotiated through offer/answer; both sides send
 * 50 packets/s of G.711 (or G.722 with `--codec g722`; a tone, encoded every tick) and the answering side decodes what it
 * receives through the jitter buffer into its `input` iterator (as the voice pipeline will).
 * The pair count grows stage by stage until 1% or more of packets are lost, or sent late (more than
 * 60 ms, the receiver's 3-packet jitter buffer, behind their due time, or skipped), or concealed at
 * our own receivers, or the time budget is used. The share sent more than 20 ms late is printed too.
 *
 * With --workers N the pairs are spread over N worker threads, each with its own MediaService
 * (port range, pacing clock): the layout for using more than one core in one process.
 *
 *   node --import tsx bench/rtp-sessions.ts [--stages 50,100,200] [--seconds 8] [--budget 110] [--workers 1]
 */
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { MediaService } from '../media/media-service.js';
import type { MediaSession } from '../media/media-session.js';

interface StageCounters {
  sent: number;
  received: number;
  concealed: number;
  ticks: number;
  skipped: number;
  over20: number;
  over60: number;
  maxLagMs: number;
  busyMs: number;
  elapsedMs: number;
  elu: number;
}

type ToWorker = { type: 'stage'; pairs: number; seconds: number } | { type: 'stop' };
type FromWorker = { type: 'measuring' } | { type: 'result'; counters: StageCounters } | { type: 'stopped'; framesDecoded: number };

const warmupMs = 1500;
const tone = Int16Array.from({ length: 8000 }, (_, i) => Math.round(6000 * Math.sin((2 * Math.PI * 440 * i) / 8000)));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The sessions of one thread. */
class PairRunner {
  private readonly service: MediaService;
  private readonly pairs: { caller: MediaSession; agent: MediaSession }[] = [];
  private readonly feeder: NodeJS.Timeout;
  framesDecoded = 0;

  constructor(portMin: number, portMax: number) {
    this.service = new MediaService({ bindAddress: '127.0.0.1', portMin, portMax, timeouts: { rtpTimeoutMs: 0 }, receiveBufferBytes: 1 << 20 });
    // Keep every sender's queue topped up so real audio (not idle silence) is encoded each tick.
    this.feeder = setInterval(() => {
      for (const { caller, agent } of this.pairs) {
        if (caller.output.queuedMs < 500) caller.output.write(tone);
        if (agent.output.queuedMs < 500) agent.output.write(tone);
      }
    }, 200);
  }

  async stage(target: number, seconds: number, onMeasuring: () => void): Promise<StageCounters> {
    while (this.pairs.length < target) await this.addPair();
    await sleep(warmupMs);
    const s = this.service.scheduler.stats;
    const before = { ...this.totals(), ticks: s.ticks, skipped: s.skippedTicks, over20: s.lagOver20Ms, over60: s.lagOver60Ms, busy: s.busyMs, at: performance.now() };
    const elu = performance.eventLoopUtilization();
    s.maxLagMs = 0;
    onMeasuring();
    await sleep(seconds * 1000);
    const sentAt = this.totals().sent;
    await sleep(100); // let packets in flight land before counting them
    const after = this.totals();
    return {
      sent: sentAt - before.sent,
      received: after.received - before.received,
      concealed: after.concealed - before.concealed,
      ticks: s.ticks - before.ticks,
      skipped: s.skippedTicks - before.skipped,
      over20: s.lagOver20Ms - before.over20,
      over60: s.lagOver60Ms - before.over60,
      maxLagMs: s.maxLagMs,
      busyMs: s.busyMs - before.busy,
      elapsedMs: performance.now() - before.at,
      elu: performance.eventLoopUtilization(elu).utilization,
    };
  }

  async stop(): Promise<void> {
    clearInterval(this.feeder);
    await this.service.close();
  }

  private async addPair(): Promise<void> {
    const caller = await this.service.offer();
    // `--codec g722`: the caller puts G.722 first, so the pair runs wideband (16 kHz, ADPCM).
    const offer = arg('codec', 'pcmu') === 'g722' ? caller.localSdp.replace(/RTP\/AVP 0 8 9 /, 'RTP/AVP 9 0 8 ') : caller.localSdp;
    const answer = await this.service.answer(offer);
    if (!answer.ok) throw new Error(answer.message);
    caller.applyAnswer(answer.sdp);
    const agent = answer.session as MediaSession;
    this.pairs.push({ caller, agent });
    void (async () => {
      for await (const frame of agent.input) this.framesDecoded += frame.samples.length > 0 ? 1 : 0;
    })();
  }

  private totals(): { sent: number; received: number; concealed: number } {
    let sent = 0;
    let received = 0;
    let concealed = 0;
    for (const { caller, agent } of this.pairs) {
      for (const s of [caller, agent]) {
        sent += s.stats.packetsSent;
        received += s.stats.packetsReceived;
        // What a listener would notice: holes concealed at playout and packets too late to play.
        concealed += s.jitterStats.missing + s.jitterStats.late;
      }
    }
    return { sent, received, concealed };
  }
}

function portRange(index: number): [number, number] {
  const per = Math.floor(16000 / Math.max(1, workersWanted()));
  return [20000 + index * per, 20000 + (index + 1) * per - 1];
}

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}

function workersWanted(): number {
  return isMainThread ? Math.max(0, Number(arg('workers', '0'))) : Number((workerData as { workers: number }).workers);
}

/** A thread running pairs: the main thread itself (no workers) or a worker. */
interface Lane {
  stage(pairs: number, seconds: number): Promise<{ measuringAt: Promise<void>; result: Promise<StageCounters> }>;
  stop(): Promise<number>;
}

function localLane(): Lane {
  const [min, max] = portRange(0);
  const runner = new PairRunner(min, max);
  return {
    async stage(pairs, seconds) {
      let measuring!: () => void;
      const measuringAt = new Promise<void>((r) => (measuring = r));
      return { measuringAt, result: runner.stage(pairs, seconds, measuring) };
    },
    async stop() {
      await runner.stop();
      return runner.framesDecoded;
    },
  };
}

function workerLane(index: number, workers: number): Lane {
  // Workers do not inherit tsx's loader hooks: register them first, then load this file.
  const bootstrap = `(async () => { const { register } = await import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}); register(); await import(${JSON.stringify(import.meta.url)}); })();`;
  const worker = new Worker(bootstrap, { eval: true, workerData: { index, workers } });
  const next = (type: FromWorker['type']): Promise<FromWorker> =>
    new Promise((resolve) => {
      const onMessage = (m: FromWorker): void => {
        if (m.type !== type) return;
        worker.off('message', onMessage);
        resolve(m);
      };
      worker.on('message', onMessage);
    });
  return {
    async stage(pairs, seconds) {
      const measuring = next('measuring');
      const result = next('result');
      worker.postMessage({ type: 'stage', pairs, seconds } satisfies ToWorker);
      return {
        measuringAt: measuring.then(() => undefined),
        result: result.then((m) => (m.type === 'result' ? m.counters : Promise.reject(new Error('bad reply')))),
      };
    },
    async stop() {
      const stopped = next('stopped');
      worker.postMessage({ type: 'stop' } satisfies ToWorker);
      const m = await stopped;
      await worker.terminate();
      return m.type === 'stopped' ? m.framesDecoded : 0;
    },
  };
}

async function workerMain(): Promise<void> {
  const { index } = workerData as { index: number };
  const [min, max] = portRange(index);
  const runner = new PairRunner(min, max);
  const port = parentPort;
  port?.on('message', (m: ToWorker) => {
    if (m.type === 'stage') {
      void runner.stage(m.pairs, m.seconds, () => port.postMessage({ type: 'measuring' } satisfies FromWorker)).then((counters) =>
        port.postMessage({ type: 'result', counters } satisfies FromWorker),
      );
    } else {
      void runner.stop().then(() => port.postMessage({ type: 'stopped', framesDecoded: runner.framesDecoded } satisfies FromWorker));
    }
  });
}

async function main(): Promise<void> {
  const stages = arg('stages', '50,100,200,400,600,800,1000,1200').split(',').map(Number);
  const seconds = Number(arg('seconds', '8'));
  const budgetSeconds = Number(arg('budget', '110'));
  const workers = workersWanted();
  const lanes = workers === 0 ? [localLane()] : Array.from({ length: workers }, (_, i) => workerLane(i, workers));
  const started = performance.now();
  console.log(`bidirectional G.711 RTP on loopback, ${seconds} s per stage, 50 pkt/s each way per pair, ${workers === 0 ? 'main thread only' : `${workers} worker threads`}`);
  console.log(`host: ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), load average at start ${loadavg()[0]?.toFixed(2)}`);
  console.log('CPU% = this process, all threads (100 = one core); loop% = busiest thread event-loop utilisation');
  console.log('late = sent > 60 ms (the 3-packet jitter buffer) behind schedule, or skipped; >20ms% = more than one packet time late');
  console.log('concealed = holes and too-late packets at our own receivers; criterion: loss, late and concealed each < 1%');
  console.log('pairs  endpoints  packets/s(tx+rx)  loss%   late%  >20ms%  concealed%  maxLag ms   CPU%  loop%  RSS MB  load');
  let best: { pairs: number; pps: number; cpu: number } | undefined;
  let costPerEndpoint = 0;
  for (const target of stages) {
    if (performance.now() - started + (seconds + warmupMs / 1000 + 2) * 1000 > budgetSeconds * 1000) {
      console.log(`(time budget reached before ${target} pairs)`);
      break;
    }
    const perLane = Math.ceil(target / lanes.length);
    const runs = await Promise.all(lanes.map((lane) => lane.stage(perLane, seconds)));
    await Promise.all(runs.map((r) => r.measuringAt));
    const cpuBefore = process.cpuUsage();
    const t0 = performance.now();
    const results = await Promise.all(runs.map((r) => r.result));
    const cpu = process.cpuUsage(cpuBefore);
    const wallMs = performance.now() - t0;
    const sum = (f: (c: StageCounters) => number): number => results.reduce((a, c) => a + f(c), 0);
    const sent = sum((c) => c.sent);
    const received = sum((c) => c.received);
    const ticks = sum((c) => c.ticks + c.skipped);
    const pairs = perLane * lanes.length;
    const pps = Math.round(((sent + received) / sum((c) => c.elapsedMs)) * 1000 * lanes.length);
    const lossPct = sent > 0 ? Math.max(0, ((sent - received) / sent) * 100) : 0;
    const latePct = ticks > 0 ? (sum((c) => c.over60 + c.skipped) / ticks) * 100 : 0;
    const late20Pct = ticks > 0 ? (sum((c) => c.over20 + c.skipped) / ticks) * 100 : 0;
    const concealedPct = received > 0 ? (sum((c) => c.concealed) / received) * 100 : 0;
    const cpuPct = ((cpu.user + cpu.system) / 1000 / wallMs) * 100;
    const loopPct = Math.max(...results.map((c) => c.elu)) * 100;
    const maxLag = Math.max(...results.map((c) => c.maxLagMs));
    console.log(
      [
        String(pairs).padStart(5), String(pairs * 2).padStart(9), String(pps).padStart(16), lossPct.toFixed(2).padStart(5),
        latePct.toFixed(2).padStart(6), late20Pct.toFixed(2).padStart(6), concealedPct.toFixed(2).padStart(10),
        maxLag.toFixed(1).padStart(9), cpuPct.toFixed(0).padStart(5), loopPct.toFixed(0).padStart(5),
        String(Math.round(process.memoryUsage().rss / 1048576)).padStart(6), (loadavg()[0] ?? 0).toFixed(1).padStart(4),
      ].join('  '),
    );
    if (lossPct >= 1 || latePct >= 1 || concealedPct >= 1) {
      console.log(`stopped: ${pairs} pairs reach 1% lost, late or concealed packets`);
      break;
    }
    best = { pairs, pps, cpu: cpuPct };
    // The largest passing stage amortises fixed costs best and is not yet saturated.
    costPerEndpoint = cpuPct / (pairs * 2);
  }
  console.log(
    best
      ? `sustained: ${best.pairs} pairs (${best.pairs * 2} RTP endpoints, ${best.pps} packets/s) with < 1% lost/late at ${best.cpu.toFixed(0)}% CPU`
      : 'no stage met the < 1% criterion',
  );
  if (costPerEndpoint > 0) {
    // On a contended machine the lateness criterion trips on the scheduler, not on our cost:
    // the CPU each endpoint costs is the figure that carries over to a quiet machine.
    const perCore = Math.floor(80 / costPerEndpoint);
    console.log(`CPU cost: ${(costPerEndpoint * 100).toFixed(1)}% of a core per 100 endpoints -> about ${perCore} endpoints (${Math.floor(perCore / 2)} pairs) per core at 80% load (extrapolated, not measured)`);
  }
  const decoded = await Promise.all(lanes.map((l) => l.stop()));
  console.log(`frames decoded by agents: ${decoded.reduce((a, b) => a + b, 0)}`);
}

if (isMainThread) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
} else {
  void workerMain();
}
