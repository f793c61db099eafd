import assert from 'node:assert/strict';
import type { Counter } from 'prom-client';
import { metricsRegistry } from '../../core/metrics.js';
import type { SipResponse } from '../../gateway/sip/message/message.js';
import { runSipp, udpKernelLosses } from '../helpers/sipp.js';
import { sipsakProbes } from '../helpers/sipsak.js';
import { numbers, startGatewayFixture, type GatewayFixture } from './gateway-harness.js';
import { UdpPeer, sipRequest, statusLine } from './udp-peer.js';

const offer = (port: number): string =>
  `v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio ${port} RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n`;

/** The gateway's own count of requests shed before parsing, for one action and reason. */
async function shed(action: string, reason: string): Promise<number> {
  const metric = metricsRegistry.getSingleMetric('vap_sip_requests_shed_total') as Counter<string> | undefined;
  const values = (await metric?.get())?.values ?? [];
  return values.find((v) => v.labels['action'] === action && v.labels['reason'] === reason)?.value ?? 0;
}

const floodOf = (target: string) => ({
  scenario: 'uac-invite-flood-expect-answer-or-503.xml',
  target,
  localIp: '127.0.0.1',
  service: numbers.trunkDid,
  extraArgs: ['-nr', '-buff_size', '4194304'],
  timeoutMs: 30_000,
});

/**
 * Twice the refusal rate, so all three outcomes happen; bench/sip-overload.ts runs the issue's
 * 2,000/s on a node of its own. 500/s leaves the cores to the suite's other files: at 1,000/s a
 * CI run with the cores shared by six files left a monitor OPTIONS unanswered for 5 s.
 */
const rate = 500;
const seconds = 4;
const abuse = { perSourceRate: 20, perSourceBurst: 20, refusalRate: 250, retryAfterSeconds: 7 };

/**
 * Issue 12: an INVITE flood (500/s here) from one source (SIPp, 127.0.0.1, the trunk's own address) while a
 * sipsak OPTIONS monitor on 127.0.0.2 keeps probing and the flooding source hangs up a call it
 * set up before. The refusal rate is set below the flood so both documented outcomes of an
 * over-budget INVITE happen: 503 + Retry-After up to `refusalRate` per second, silence beyond.
 */
describe('gateway: INVITE flood from one source (SIPp, sipsak)', function () {
  this.timeout(60_000);
  let fx: GatewayFixture;
  const did = `sip:${numbers.trunkDid}@127.0.0.1`;

  before(async () => {
    fx = await startGatewayFixture({ ringMs: 0, abuse, maxCallsPerNumber: 100_000, maxCallsPerTenant: 100_000 });
  });
  after(async () => {
    await fx?.close();
  });

  it('answers every monitor OPTIONS and the BYE of the call up during the flood, and every flood INVITE 200/503 or drops it by the refusal rate', async () => {
    const gw = fx.gateway.ports.UDP as number;
    const caller = await UdpPeer.open('127.0.0.1');
    try {
      caller.send(gw, sipRequest(caller, 'INVITE', { uri: did, callId: 'kept-up', body: offer(40_030) }));
      const ok = (await caller.wait((e) => statusLine(200)(e) && e.msg?.callId === 'kept-up', 5000)).msg as SipResponse;
      const tag = ok.to.tag as string;
      caller.send(gw, sipRequest(caller, 'ACK', { uri: did, callId: 'kept-up', toTag: tag, cseq: '1 ACK' }));
      // A short flood within the refusal budget first: the measured one then meets warm code and an
      // open connection pool, as a gateway that has been up for a while would.
      const warm = await runSipp({ ...floodOf(fx.target), calls: 150, rate });
      assert.equal(warm.failed, 0, warm.errors.slice(0, 1500));
      const before = { refused: await shed('refused', 'source over its rate'), dropped: await shed('dropped', 'source over its refusal rate') };

      const started = Date.now();
      const kernelLostBefore = udpKernelLosses();
      const flood = runSipp({ ...floodOf(fx.target), calls: rate * seconds, rate, traceCounts: true, watchDrops: true });
      const probes = sipsakProbes({ port: gw, localIp: '127.0.0.2', count: 16, everyMs: 150, boundSeconds: 10 });
      // Mid-flood, the flooding source ends its established call: in-dialog requests are never shed.
      await new Promise((r) => setTimeout(r, 1500));
      const byeSent = Date.now();
      // As a UAC does (RFC 3261 sec. 17.1.2.2, Timer E): resent at 0.5, 1, 2, 4 s until answered.
      const bye = sipRequest(caller, 'BYE', { uri: did, callId: 'kept-up', toTag: tag, cseq: '2 BYE' });
      caller.send(gw, bye);
      let byesSent = 1;
      const resend = [500, 1500, 3500, 7500].map((at) => setTimeout(() => (caller.send(gw, bye), byesSent++), at));
      await caller
        .wait((e) => statusLine(200)(e) && e.msg?.callId === 'kept-up' && e.msg.cseq.method === 'BYE', 16_000)
        .finally(() => resend.forEach(clearTimeout));
      const byeMs = Date.now() - byeSent;
      const [result, monitor] = await Promise.all([flood, probes]);
      const elapsedS = (Date.now() - started) / 1000;

      // Behaviour, not speed (bench/sip-overload.ts measures the p99 < 200 ms target on its own
      // node): the in-dialog BYE and every probe are answered during the flood (before the
      // priority lanes, 1 probe of 12 was, after 7 s). No bound on the typical answer time: with
      // six files, c8 and SIPp on 2 cores, SIPp sends its flood in catch-up bursts and the gateway
      // gets a fraction of a core, so the kernel's receive buffer (FIFO, before any lane) held the
      // probes 0.1-1.7 s in full runs at 1,000/s as at 2,000/s, and about 1 ms alone.
      assert.ok(byeMs < 8_000, `BYE of the call already up answered in ${byeMs} ms`);
      const latencies = monitor.map((p) => {
        assert.equal(p.exitCode, 0, `sipsak got no 200:\n${p.output}`);
        return p.latencyMs ?? Infinity;
      }).sort((a, b) => a - b);
      assert.ok(latencies.at(-1)! < 10_000, `slowest OPTIONS answer ${latencies.at(-1)} ms: ${latencies.join(', ')}`);
      // SIPp counts a call ended by a receive timeout (a dropped INVITE) as failed: exit code 1 is
      // expected here; what must not happen is an unexpected message (another status, a late answer).
      assert.ok(result.exitCode === 0 || result.exitCode === 1, `SIPp exit ${result.exitCode}: ${result.stdout.slice(-1500)}`);
      const c = result.counts ?? {};
      const unexpected = Object.entries(c).filter(([k, v]) => k.endsWith('_Unexp') && v > 0);
      assert.deepEqual(unexpected, [], `unexpected messages: ${result.errors.slice(0, 1500)}`);
      const offered = c['0_INVITE_Sent'] ?? 0;
      const answered = c['4_200_Recv'] ?? 0;
      const refused = c['3_503_Recv'] ?? 0;
      const unanswered = c['1_100_Timeout'] ?? 0;
      assert.equal(offered, rate * seconds);
      assert.equal(answered + refused + unanswered, offered, `every INVITE ends one way (no provisional without a final): ${JSON.stringify(c)}`);
      // A copy of the BYE resent after its dialog was gone (the 200 was slow to come back) is
      // answered again by its transaction (RFC 3261 sec. 17.2.2), never refused like the flood:
      // before, it was charged like a new request, and two full runs counted one 503 more than
      // SIPp got.
      const byeAnswers = (status: number): number => caller.got.filter((e) => statusLine(status)(e) && e.msg?.callId === 'kept-up' && e.msg.cseq.method === 'BYE').length;
      const bye503 = byeAnswers(503);
      assert.equal(bye503, 0, `${byesSent} BYE copies sent, ${bye503} refused 503`);
      // Nothing vanished on the way: each refusal and each silence is one the gateway decided. An
      // answer SIPp's own socket dropped (its kernel buffer full), one that came after SIPp's
      // 3 s timeout (SIPp discards it as a dead call's message: in a full run the gateway gets a
      // fraction of a core, and once 200 of its 503s came late), or one sent after SIPp exited
      // reaches SIPp's counts as a timeout, never more of them than the kernel and SIPp lost; a
      // BYE copy still unanswered may be a drop.
      // A gateway given little CPU also answers part of its backlog after SIPp has exited: the
      // kernel counts those answers as sent to no port (a CI run lost 423 of 1,753 503s so).
      const byeUnanswered = Math.max(0, byesSent - byeAnswers(200) - bye503);
      const refusedByGateway = (await shed('refused', 'source over its rate')) - before.refused - bye503;
      const droppedByGateway = (await shed('dropped', 'source over its refusal rate')) - before.dropped;
      const kernelLost = kernelLostBefore === undefined ? undefined : (udpKernelLosses() ?? kernelLostBefore) - kernelLostBefore;
      const lost = Math.max(result.receiveDrops ?? 0, kernelLost ?? 0) + result.deadCallMessages;
      const counted = `SIPp: ${refused} 503, ${unanswered} timeouts, ${result.receiveDrops ?? 0} dropped by its kernel buffer, ${result.deadCallMessages} discarded as late; kernel, all processes: ${kernelLost ?? '?'} lost (full buffers, no port); gateway: ${refusedByGateway} refused, ${droppedByGateway} dropped; BYE copies: ${byesSent} sent, ${bye503} refused, ${byeUnanswered} unanswered`;
      assert.ok(refused <= refusedByGateway && refusedByGateway - refused <= lost, counted);
      // SIPp's timeouts less the 503s it lost or got late: the flood INVITEs the gateway dropped, plus any 200 lost or late.
      const lost503 = refusedByGateway - refused;
      const droppedFlood = unanswered - lost503;
      assert.ok(droppedFlood >= droppedByGateway - byeUnanswered && droppedFlood <= droppedByGateway + (lost - lost503), counted);
      // The documented rule: admitted within the source's bucket, 503 within the refusal bucket, silence beyond.
      assert.ok(answered <= abuse.perSourceBurst + abuse.perSourceRate * elapsedS, `answered ${answered}`);
      assert.ok(refused <= abuse.refusalRate * (1 + elapsedS), `refused ${refused}`);
      assert.ok(unanswered > 0, `the flood (${rate}/s) went past the refusal rate (${abuse.refusalRate}/s)`);
    } finally {
      caller.close();
    }
  });
});
