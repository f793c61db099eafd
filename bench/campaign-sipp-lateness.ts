/**
 * Lateness of N campaign calls due at the same instant, dialled through the gateway's real SIP
 * Originator to a SIPp UAS answering 486 (issue 5: "time from due to INVITE sent").
 *
 * The INVITE time is taken on the wire: tcpdump captures the UDP datagrams to SIPp's port on the
 * loopback interface and the kernel stamps each packet as it is transmitted, so the figure
 * depends neither on our process reporting its own send nor on when SIPp gets around to reading
 * its socket. Each call counts its first INVITE (by Call-ID; retransmissions ignored). Also
 * printed: due -> `originate()` called and due -> outcome recorded by the originator.
 * Uses the test harness: PostgreSQL private cluster (fsync off), gateway and media on loopback.
 * Needs tcpdump and the capability to capture on `lo` (root or CAP_NET_RAW).
 *
 *   node --import tsx bench/campaign-sipp-lateness.ts [--calls 10000] [--pool 10]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { systemClock } from '../core/clock.js';
import { createLogger } from '../core/logger.js';
import type { OriginateRequest, OriginateResult, Originator } from '../core/ports/originator.js';
import { acceptMessage } from '../control-api/features/campaigns/accept-message.js';
import { startCampaignWorker } from '../control-api/features/campaigns/campaign-worker.js';
import type { CampaignSpec } from '../control-api/model/domain/campaign.js';
import { StoreCallDirectory } from '../control-api/features/gateway-adapters/store-call-directory.js';
import { StoreTrunkRoutes } from '../control-api/features/gateway-adapters/store-trunk-routes.js';
import { campaignDoc, numberDoc, testBox, trunkDoc } from '../test/helpers/resource-documents.js';
import { createResourceDefinitions } from '../control-api/model/resources/registry.js';
import { SipOriginator } from '../gateway/outbound/sip-originator.js';
import { MediaService } from '../media/media-service.js';
import { startGatewayFixture } from '../test/gateway/gateway-harness.js';
import { scenarioDir } from '../test/helpers/sipp.js';
import { openStore } from '../control-api/platform/store/database.js';
import { stopTestPostgres } from '../test/helpers/postgres-cluster.js';

const { values: args } = parseArgs({ options: { calls: { type: 'string', default: '10000' }, pool: { type: 'string', default: '10' } } });
const calls = Number(args.calls);
/** Starts tcpdump on `lo` for UDP to `port`; `stop()` returns the capture file's bytes and tcpdump's summary. */
async function captureUdpTo(port: number): Promise<{ stop: () => Promise<{ pcap: Buffer; summary: string }> }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'vap-bench-pcap-'));
  const file = path.join(dir, 'invites.pcap');
  // -B: a 64 MB kernel buffer so a burst of 10,000 INVITEs is not dropped; -U: write per packet.
  const child = spawn('tcpdump', ['-i', 'lo', '-n', '-U', '-B', '65536', '-s', '4096', '-w', file, `udp and dst host 127.0.0.1 and dst port ${port}`], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  await new Promise<void>((resolve, reject) => {
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      if (stderr.includes('listening on')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`tcpdump exited (${code}): ${stderr}`)));
  });
  return {
    stop: async () => {
      // tcpdump may lag behind a burst on a loaded machine, and SIGINT drops what it has not
      // written yet: wait until the file stops growing (kernel timestamps are unaffected).
      for (let last = -1, stableSince = Date.now(), until = Date.now() + 60_000; Date.now() < until; await new Promise((r) => setTimeout(r, 100))) {
        const size = statSync(file).size;
        if (size !== last) [last, stableSince] = [size, Date.now()];
        else if (Date.now() - stableSince > 1_500) break;
      }
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGINT');
      await exited;
      const pcap = readFileSync(file);
      rmSync(dir, { recursive: true, force: true });
      return { pcap, summary: stderr.split('\n').filter((l) => /captured|dropped|received/.test(l)).join('; ') };
    },
  };
}

/**
 * SIPp UAS answering 486, without message tracing (the test helper traces every message to a
 * file, which at thousands of INVITEs a second slows SIPp into retransmissions), with a 4 MB
 * socket buffer (net.core.rmem_max here): a burst overflows the default ~200 KB, the kernel drops
 * INVITEs and only our retransmissions (500 ms, 1 s, 2 s...) get them through.
 */
async function startUas(calls: number): Promise<{ port: number; stop: () => void }> {
  const port = 36_000 + 2 * Math.floor(Math.random() * 1000);
  const child = spawn('sipp', ['-sf', path.join(scenarioDir, 'uas-486.xml'), '-t', 'u1', '-i', '127.0.0.1', '-p', String(port), '-m', String(calls), '-nostdin', '-timeout', '300s', '-buff_size', '4194304'], { cwd: scenarioDir, stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 500));
  if (child.exitCode !== null) throw new Error(`sipp exited with ${child.exitCode} (port ${port} taken?)`);
  return { port, stop: () => child.kill('SIGTERM') };
}

/** UDP datagrams the kernel dropped for full receive buffers, machine-wide (/proc/net/snmp). */
function udpReceiveBufferErrors(): number {
  const lines = readFileSync('/proc/net/snmp', 'utf8').split('\n').filter((l) => l.startsWith('Udp: '));
  const [names, values] = lines.map((l) => l.split(/\s+/).slice(1));
  const i = names?.indexOf('RcvbufErrors') ?? -1;
  return i >= 0 ? Number(values?.[i]) : NaN;
}

/** Earliest kernel timestamp (epoch ms) of an INVITE per Call-ID in a classic pcap of Ethernet-framed IPv4/UDP. */
function firstInvites(pcap: Buffer): { first: Map<string, number>; total: number } {
  const magic = pcap.readUInt32LE(0);
  const nanos = magic === 0xa1b23c4d;
  if (magic !== 0xa1b2c3d4 && !nanos) throw new Error('not a little-endian pcap file');
  if (pcap.readUInt32LE(20) !== 1) throw new Error(`unexpected link type ${pcap.readUInt32LE(20)} (want Ethernet framing on lo)`);
  const first = new Map<string, number>();
  let total = 0;
  for (let at = 24; at + 16 <= pcap.length; ) {
    const ms = pcap.readUInt32LE(at) * 1000 + pcap.readUInt32LE(at + 4) / (nanos ? 1e6 : 1e3);
    const caplen = pcap.readUInt32LE(at + 8);
    const frame = pcap.subarray(at + 16, at + 16 + caplen);
    at += 16 + caplen;
    const ip = 14;
    if (frame.length < ip + 28 || frame.readUInt16BE(12) !== 0x0800 || frame[ip + 9] !== 17) continue;
    const payload = frame.subarray(ip + (frame[ip]! & 0x0f) * 4 + 8).toString('latin1');
    if (!payload.startsWith('INVITE ')) continue;
    total += 1;
    const callId = /^(?:Call-ID|i)[ \t]*:[ \t]*(\S+)/im.exec(payload)?.[1];
    if (callId && !first.has(callId)) first.set(callId, ms);
  }
  return { first, total };
}

const pct = (sorted: readonly number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;

async function main(): Promise<void> {
  const fx = await startGatewayFixture();
  const box = testBox();
  const uas = await startUas(calls);
  const defs = createResourceDefinitions({ secretBox: box });
  // The worker and the originator share one pool of the platform's default size (database.poolSize).
  const store = await openStore({ url: fx.store.url!, poolSize: Number(args.pool) });
  const db = store.db;
  await defs.sipTrunk.repository.create(db, fx.ids.tenantId, trunkDoc('sipp-bench', {
    inbound: { terminationAddresses: ['127.0.0.99'], dids: [] },
    outbound: { address: '127.0.0.1', port: uas.port, transport: 'udp', username: 'acme-out', password: 'trunk-secret-1' },
  }) as never);
  await defs.phoneNumber.repository.create(db, fx.ids.tenantId, numberDoc('+914455599999', 'Flow', { provider: { type: 'customSipTrunk', trunk: 'sipp-bench' } }) as never);
  const campaign = await defs.campaign.repository.create(db, fx.ids.tenantId, campaignDoc('Bench SIPp', '+914455599999', 'Flow', { published: true }) as CampaignSpec);

  const far = Date.now() + 3_600_000;
  const ids: string[] = [];
  for (let i = 0; i < calls; i += 200) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(200, calls - i) }, () =>
        acceptMessage(db, fx.ids.tenantId, { campaignId: campaign.id, to: '+919812345678', variables: {}, scheduledAt: far, bypassCallingWindow: true }, { now: Date.now() }),
      ),
    );
    ids.push(...batch.map((b) => b.messageId));
  }
  const due = Date.now() + 5_000;
  await db.updateTable('campaign_messages').set({ next_attempt_at: new Date(due), requested_at: new Date(due) }).where('id', 'in', ids).execute();

  // RTP ports for the burst: every call in flight holds a pair until its final response, so a
  // pair per call (the platform's default range, 10,000 ports, holds 5,000), not the test
  // fixture's small range. Ports other processes hold are skipped by the pool.
  const media = new MediaService({ bindAddress: '127.0.0.1', portMin: 20_000, portMax: 20_000 + 2 * calls + 1_000, logger: pino({ level: 'silent' }) });
  const sip = new SipOriginator({
    stack: fx.gateway.stack,
    media,
    trunks: new StoreTrunkRoutes({ db, secretBox: box }),
    directory: new StoreCallDirectory({ db }),
    registry: fx.gateway.registry,
    clock: systemClock,
    logger: pino({ level: 'silent' }),
  });
  const toOriginate: number[] = [];
  const toOutcome: number[] = [];
  const outcomes = new Map<string, number>();
  const wire = await captureUdpTo(uas.port);
  const dropsBefore = udpReceiveBufferErrors();
  const measured: Originator = {
    async originate(request: OriginateRequest): Promise<OriginateResult> {
      toOriginate.push(Date.now() - due);
      const result = await sip.originate(request);
      toOutcome.push(Date.now() - due);
      const key = `${result.outcome}/${result.sipStatus ?? '-'}${result.outcome === 'failed' ? ` (${result.reason ?? ''})` : ''}`;
      outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
      return result;
    },
  };
  const worker = await startCampaignWorker({ store, logger: createLogger({ level: 'warn' }), originator: measured, secretBox: box, trigger: 'poll', workerId: 'bench-sipp' });
  // CPU of this process (scheduler, gateway, media) from the due moment until every outcome is in:
  // steadier than wall-clock figures on a machine shared with other work.
  let cpuAtDue: NodeJS.CpuUsage | undefined;
  setTimeout(() => (cpuAtDue = process.cpuUsage()), due - Date.now());
  while (toOutcome.length < calls && Date.now() < due + 240_000) await new Promise((r) => setTimeout(r, 20));
  const cpu = process.cpuUsage(cpuAtDue);
  const drops = udpReceiveBufferErrors() - dropsBefore;
  const busyUntil = Date.now() - due;
  await worker.scheduler.settled();
  const settledAt = Date.now() - due;
  await worker.stop(2_000);
  // Let the last datagrams reach the capture file before stopping it.
  await new Promise((r) => setTimeout(r, 500));
  const captured = await wire.stop();
  uas.stop();
  const parsed = firstInvites(captured.pcap);
  const invites = [...parsed.first.values()].map((t) => t - due).sort((x, y) => x - y);
  const a = [...toOriginate].sort((x, y) => x - y);
  const b = [...toOutcome].sort((x, y) => x - y);
  console.log(`${calls} calls due at once -> SIPp UAS (486), store poller, real SIP Originator over UDP loopback`);
  console.log(`  due -> INVITE on the wire: p50 ${pct(invites, 0.5).toFixed(0)} ms  p99 ${pct(invites, 0.99).toFixed(0)} ms  max ${(invites.at(-1) ?? 0).toFixed(0)} ms  (${invites.length} INVITEs; tcpdump: ${captured.summary})`);
  console.log(`  UDP datagrams dropped for full receive buffers during the run (machine-wide): ${drops}; INVITE retransmissions: ${parsed.total - invites.length}`);
  console.log(`  due -> originate():      p50 ${pct(a, 0.5)} ms  p99 ${pct(a, 0.99)} ms  max ${a.at(-1) ?? 0} ms  (${a.length} calls)`);
  console.log(`  due -> outcome (486 in): p50 ${pct(b, 0.5)} ms  p99 ${pct(b, 0.99)} ms  max ${b.at(-1) ?? 0} ms  (${b.length} calls)`);
  console.log(`  outcomes: ${JSON.stringify(Object.fromEntries(outcomes))}; all recorded in the store ${settledAt} ms after due`);
  console.log(`  node CPU due -> last outcome (${busyUntil} ms): ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms (${((cpu.user + cpu.system) / 1000 / calls).toFixed(2)} ms per call); load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  await media.close();
  await store.close();
  await fx.close();
  await stopTestPostgres();
}

main().catch(async (error: unknown) => {
  console.error(error);
  await stopTestPostgres();
  process.exit(1);
});
