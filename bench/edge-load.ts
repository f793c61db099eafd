/**
 * Calls per second through the SIP edge (docs/edge.md) with one and with two platform nodes, in
 * the same run, side by side, and the CPU the edge itself spends per call.
 *
 * The deployment is the multi-node test's (test/helpers/edge-cluster.ts): Kamailio with
 * edge-conf/kamailio.cfg as shipped, rtpengine, and platform nodes as the built platform
 * (`dist/bin/platform.js`, plain node, as `npm start` runs it) with the gateway, control and
 * worker roles on one private PostgreSQL, recordings in the database. SIPp (the carrier) calls
 * the edge at rising rates; each call is a real platform call: the number's recipe runs (the agent
 * says "Bye." with espeak-ng and hangs up), the call is recorded and its record written; SIPp sends
 * no audio. A step passes when under 1% of its calls failed and SIPp retransmitted under 1% of
 * its messages and the calls were placed at 90% of the rate or more; calls/s is the successful
 * calls over the step's wall time less the length of one call alone (measured first), and the
 * figure per configuration is the highest passing step. CPU is read from /proc:
 * Kamailio's whole process group (its workers, timer and probing processes), each node with the
 * children it reaped (espeak-ng), rtpengine. The nodes' per-carrier admission rate
 * (sip.abuse.perSourceRate, 50/s by default), the calls allowed per number and tenant (100 and
 * 500 at once, every call here is to one number) and admission by capacity (sip.admission: calls,
 * call rate, event-loop lag) are raised or off: this measures capacity, not limits.
 *
 *   node --import tsx bench/edge-load.ts [--rates 10,20,40,60,80,100] [--seconds 10]
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openStore } from '../control-api/platform/store/database.js';
import { clusterSecrets, edgeAddresses, freePort, nodeEnv, processGroupCpuSeconds, startKamailio, startRtpengine, type Daemon, type NodeSettings } from '../test/helpers/edge-cluster.js';
import { edgeDid, seedEdgeTenant } from '../test/helpers/edge-tenant.js';
import { spawnPlatform, waitForLine, type PlatformProcess } from '../test/helpers/platform-process.js';
import { startPostgresCluster } from '../test/helpers/postgres-cluster.js';
import { runSipp } from '../test/helpers/sipp.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? (process.argv[i + 1] ?? fallback) : fallback;
};
const rates = arg('rates', '10,20,40,60,80,100').split(',').map(Number);
const seconds = Number(arg('seconds', '10'));

/** user + system CPU seconds of one process (all its threads), with (optionally) the children it has reaped (10 ms ticks). */
function processCpuSeconds(pid: number, withChildren: boolean): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(f[11]) + Number(f[12]) + (withChildren ? Number(f[13]) + Number(f[14]) : 0);
  return ticks / 100;
}

interface Step {
  readonly rate: number;
  readonly offered: number;
  readonly ok: number;
  readonly failed: number;
  readonly retrans: number;
  /** Successful calls per second: over the step's wall time less one call's length, at most the offered rate. */
  readonly callsPerSecond: number;
  /** First INVITE to SIPp's exit (the last call ended), seconds. */
  readonly wall: number;
  readonly edgeUsPerCall: number;
  readonly rtpengineUsPerCall: number;
  readonly nodeUsPerCall: number;
  readonly passed: boolean;
}

async function main(): Promise<void> {
  // The nodes run the compiled platform: rebuild dist/ first when a source changed.
  const built = spawnSync(process.execPath, ['scripts/build-dist.mjs', '--if-stale'], { cwd: root, stdio: 'inherit' });
  if (built.status !== 0) throw new Error('building dist/ failed');
  const work = mkdtempSync(path.join(tmpdir(), 'vap-edge-bench-'));
  const pg = await startPostgresCluster();
  const daemons: Daemon[] = [];
  const procs: PlatformProcess[] = [];
  try {
    const url = await pg.createDatabase('edge_bench');
    const secrets = clusterSecrets();
    const store = await openStore({ url, poolSize: 2 });
    await seedEdgeTenant(store, secrets.secretKey, 9, { greeting: false });
    await store.close();
    const ngPort = await freePort(edgeAddresses.rtpExternal);
    const rtpengine = await startRtpengine({ ngPort, portMin: 50_000, portMax: 59_999 });
    daemons.push(rtpengine);
    const nodes: NodeSettings[] = await Promise.all(
      edgeAddresses.nodes.map(async (address, i) => ({ name: `node-${i}`, address, sipPort: await freePort(address), controlPort: await freePort(address), rtpPortMin: 30_000 + i * 4_000, dataDir: path.join(work, `node-${i}`) })),
    );
    const kamailioPort = await freePort(edgeAddresses.kamailio);
    const kamailioInternalPort = await freePort(edgeAddresses.kamailioInternal);
    const results: Record<number, Step[]> = {};
    for (const count of [1, 2]) {
      // A node is started only for the configuration that uses it: an idle second node would
      // otherwise share the cores during the one-node steps.
      while (procs.length < count) {
        const n = nodes[procs.length] as NodeSettings;
        const p = spawnPlatform(nodeEnv(n, { databaseUrl: url, secrets, edge: { kamailio: kamailioPort, kamailioInternal: kamailioInternalPort, rtpMin: 50_000, rtpMax: 59_999 }, extra: { SIP_ABUSE_PER_SOURCE_RATE: '2000', SIP_ABUSE_PER_SOURCE_BURST: '4000', SIP_MAX_CALLS_PER_NUMBER: '100000', SIP_MAX_CALLS_PER_TENANT: '1000000', SIP_ADMISSION_MAX_CALLS: '100000', SIP_ADMISSION_MAX_CALLS_PER_SECOND: '100000', SIP_ADMISSION_MAX_EVENT_LOOP_LAG_MS: '0' } }), [], { built: 'plain' });
        procs.push(p);
        await waitForLine(p, 'platform started', 120_000);
      }
      const kamailio = await startKamailio({ port: kamailioPort, internalPort: kamailioInternalPort, nodes: nodes.slice(0, count), rtpengineNgPort: ngPort, workDir: path.join(work, `kamailio-${count}`), probeIntervalSeconds: 5, nodeTimeoutMs: 2000 });
      daemons.push(kamailio);
      // One call alone: how long a call lasts end to end (SIPp start, answer, "Bye.", BYE, exit).
      // A step's calls are then spread over its wall time minus that.
      const probeStarted = Date.now();
      await runSipp({ scenario: 'uac-invite-via-proxy-expect-200-gateway-bye-silent.xml', target: `${edgeAddresses.kamailio}:${kamailioPort}`, localIp: edgeAddresses.carrier, service: edgeDid, calls: 1, rate: 1, timeoutMs: 30_000 });
      const callSeconds = (Date.now() - probeStarted) / 1000;
      const steps: Step[] = [];
      for (const rate of rates) {
        const calls = rate * seconds;
        const pids = procs.map((p) => p.child.pid as number);
        const before = { edge: processGroupCpuSeconds(kamailio.child.pid as number), rtp: processCpuSeconds(rtpengine.child.pid as number, false), nodes: pids.map((pid) => processCpuSeconds(pid, true)) };
        const started = Date.now();
        const run = await runSipp({
          scenario: 'uac-invite-via-proxy-expect-200-gateway-bye-silent.xml',
          target: `${edgeAddresses.kamailio}:${kamailioPort}`,
          localIp: edgeAddresses.carrier,
          service: edgeDid,
          calls,
          rate,
          timeoutMs: (seconds + 60) * 1000,
          traceCounts: true,
        });
        const wall = (Date.now() - started) / 1000;
        // Kamailio's transactions, the nodes' record writes and recording copies finish after the
        // last BYE: give them a moment inside the window.
        await new Promise((r) => setTimeout(r, 2000));
        const edgeCpu = processGroupCpuSeconds(kamailio.child.pid as number) - before.edge;
        const rtpCpu = processCpuSeconds(rtpengine.child.pid as number, false) - before.rtp;
        const nodeCpu = pids.reduce((sum, pid, i) => sum + processCpuSeconds(pid, true) - (before.nodes[i] ?? 0), 0);
        const retrans = Object.entries(run.counts ?? {}).filter(([k]) => k.endsWith('_Retrans')).reduce((s, [, v]) => s + v, 0);
        const per = (cpu: number): number => (run.successful > 0 ? (cpu / run.successful) * 1e6 : 0);
        const step: Step = {
          rate,
          offered: calls,
          ok: run.successful,
          failed: run.failed,
          retrans,
          callsPerSecond: run.successful / Math.max(calls / rate, wall - callSeconds),
          wall,
          edgeUsPerCall: per(edgeCpu),
          rtpengineUsPerCall: per(rtpCpu),
          nodeUsPerCall: per(nodeCpu),
          // SIPp falling behind the rate is the system not keeping up as much as a failed call is.
          passed: run.failed <= calls * 0.01 && retrans <= calls * 0.01 && run.successful >= calls * 0.99 && run.successful / Math.max(calls / rate, wall - callSeconds) >= rate * 0.9,
        };
        steps.push(step);
        if (run.failed > 0) {
          // Why calls failed, as SIPp saw it: the unexpected message (status line) or the timeout, counted.
          const why = new Map<string, number>();
          for (const m of run.errors.matchAll(/Aborting call on unexpected message[^\n]*?(while expecting '[^']*'[^\n]*?), received '([^\n']*)/g)) {
            const key = `${m[2]?.trim() ?? ''} (${m[1] ?? ''})`;
            why.set(key, (why.get(key) ?? 0) + 1);
          }
          for (const m of run.errors.matchAll(/(Aborting call on (?:UDP )?timeout[^\n]*?|Call-Id[^\n]*?timed out[^\n]*)/gi)) {
            const key = (m[1] ?? '').replace(/'[^']*@[^']*'/, "'...'").slice(0, 120);
            why.set(key, (why.get(key) ?? 0) + 1);
          }
          console.log(`  failed calls: ${[...why].map(([k, n]) => `${n} x ${k}`).join('; ') || run.errors.slice(0, 500)}`);
        }
        console.log(`${count} node(s) ${rate}/s: ${step.ok}/${calls} ok, ${step.failed} failed, ${retrans} retransmissions, ${step.callsPerSecond.toFixed(1)} calls/s (SIPp done after ${wall.toFixed(1)} s), edge ${step.edgeUsPerCall.toFixed(0)} us/call, rtpengine ${step.rtpengineUsPerCall.toFixed(0)} us/call, nodes ${(step.nodeUsPerCall / 1000).toFixed(1)} ms/call, load ${loadavg()[0]?.toFixed(1)}${step.passed ? '' : ' (step failed)'}`);
        if (!step.passed) break;
      }
      results[count] = steps;
      await kamailio.stop();
    }
    print(results);
  } finally {
    for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    for (const d of daemons) await d.stop();
    await pg.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

function print(results: Record<number, Step[]>): void {
  const cell = (s: Step | undefined): string =>
    s ? `${s.callsPerSecond.toFixed(1).padStart(6)} ${String(s.failed).padStart(4)} ${String(s.retrans).padStart(5)} ${s.edgeUsPerCall.toFixed(0).padStart(6)} ${(s.nodeUsPerCall / 1000).toFixed(1).padStart(6)}${s.passed ? ' ' : '*'}` : '-'.padStart(34);
  console.log('\ncalls/s through the edge (* = step failed: > 1% failed calls or retransmissions, or under 90% of the offered rate)');
  console.log(`${'offered/s'.padEnd(10)}| ${'1 node: calls/s fail retr edge-us node-ms'.padEnd(36)}| 2 nodes: calls/s fail retr edge-us node-ms`);
  for (const rate of rates) console.log(`${String(rate).padEnd(10)}| ${cell(results[1]?.find((s) => s.rate === rate)).padEnd(36)}| ${cell(results[2]?.find((s) => s.rate === rate))}`);
  const best = (n: number): Step | undefined => [...(results[n] ?? [])].filter((s) => s.passed).sort((a, b) => b.callsPerSecond - a.callsPerSecond)[0];
  const one = best(1);
  const two = best(2);
  console.log(`\nhighest passing step: 1 node ${one ? `${one.callsPerSecond.toFixed(1)} calls/s (offered ${one.rate}/s)` : 'none'}, 2 nodes ${two ? `${two.callsPerSecond.toFixed(1)} calls/s (offered ${two.rate}/s)` : 'none'}`);
  const all = [...(results[1] ?? []), ...(results[2] ?? [])].filter((s) => s.ok > 0);
  const edge = all.map((s) => s.edgeUsPerCall).sort((a, b) => a - b);
  console.log(`Kamailio CPU per call (whole process group, all steps): ${edge[0]?.toFixed(0)}-${edge.at(-1)?.toFixed(0)} us, median ${edge[Math.floor(edge.length / 2)]?.toFixed(0)} us; rtpengine (offer/answer/delete, no media) median ${all.map((s) => s.rtpengineUsPerCall).sort((a, b) => a - b)[Math.floor(all.length / 2)]?.toFixed(0)} us`);
  console.log(`load average at the end: ${loadavg().map((l) => l.toFixed(1)).join(' ')} (2 cores shared with SIPp, PostgreSQL, rtpengine and the nodes)`);
}

await main();
