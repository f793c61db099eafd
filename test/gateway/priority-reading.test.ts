import assert from 'node:assert/strict';
import { createSocket, type Socket } from 'node:dgram';
import type { SipResponse } from '../../gateway/sip/message/message.js';
import type { UdpTransport } from '../../gateway/sip/transport/udp.js';
import { udpReceiveDrops } from '../../gateway/sip/transport/udp-drops.js';
import { metricsRegistry } from '../../core/metrics.js';
import { numbers, startGatewayFixture, type GatewayFixture } from './gateway-harness.js';
import { UdpPeer, sipRequest, statusLine } from './udp-peer.js';

const did = `sip:${numbers.trunkDid}@127.0.0.1`;
const offer = (port: number): string =>
  `v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio ${port} RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n`;

/** Every `vap_sip_requests_shed_total{action="dropped"}`, summed over reasons. */
async function droppedTotal(): Promise<number> {
  const metric = await metricsRegistry.getSingleMetric('vap_sip_requests_shed_total')?.get();
  return (metric?.values ?? []).filter((v) => v.labels['action'] === 'dropped').reduce((n, v) => n + v.value, 0);
}

/** The trunk's INVITE flood: `total` INVITEs in bursts, each a new call; first final status per Call-ID. */
async function flood(port: number, total: number, perBurst: number): Promise<{ socket: Socket; finals: Map<string, number>; sent: number }> {
  const socket = createSocket({ type: 'udp4', recvBufferSize: 8 * 1024 * 1024 });
  await new Promise<void>((r) => socket.bind(0, '127.0.0.1', r));
  const local = socket.address().port;
  const finals = new Map<string, number>();
  socket.on('message', (buf) => {
    const text = buf.toString('latin1');
    const status = Number(text.slice(8, 11));
    const callId = /\r\nCall-ID: ([^\r]+)/i.exec(text)?.[1];
    if (callId && status >= 200 && !finals.has(callId)) finals.set(callId, status);
  });
  const body = offer(42_000);
  let sent = 0;
  while (sent < total) {
    for (let i = 0; i < perBurst && sent < total; i++, sent++) {
      const callId = `flood-${sent}`;
      socket.send(Buffer.from(
        `INVITE ${did} SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:${local};branch=z9hG4bK-${callId};rport\r\nMax-Forwards: 70\r\n` +
        `From: <sip:+919800000001@127.0.0.1>;tag=f${sent}\r\nTo: <${did}>\r\nCall-ID: ${callId}\r\nCSeq: 1 INVITE\r\n` +
        `Contact: <sip:flood@127.0.0.1:${local}>\r\nContent-Type: application/sdp\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
        'latin1',
      ), port, '127.0.0.1');
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  return { socket, finals, sent };
}

/**
 * Under a flood of new INVITEs beyond the node's capacity, the requests of calls already up and
 * other sources' OPTIONS are read first (docs/sip-stack.md "Receive lanes"), and every flood
 * INVITE is answered (200 within capacity, 503 + Retry-After beyond) or dropped by the documented
 * rule and counted. Deadlines are generous: this checks what happens, not how fast.
 */
describe('gateway: in-dialog requests and OPTIONS are served while new INVITEs are shed', function () {
  this.timeout(120_000);
  let fx: GatewayFixture;

  before(async () => {
    fx = await startGatewayFixture({
      ringMs: 0,
      abuse: { perSourceRate: 100_000, perSourceBurst: 100_000, refusalRate: 1_500, retryAfterSeconds: 5 },
      admission: { maxCalls: 3 },
    });
  });
  after(async () => {
    await fx?.close();
  });

  it('answers every probe and every request of the call up, and accounts for every flood INVITE', async () => {
    const port = fx.gateway.ports.UDP as number;
    const udp = fx.gateway.transports.get('UDP') as UdpTransport;
    const caller = await UdpPeer.open('127.0.0.1');
    const monitor = await UdpPeer.open('127.0.0.2');
    try {
      caller.send(port, sipRequest(caller, 'INVITE', { uri: did, callId: 'up', body: offer(40_200) }));
      const ok = (await caller.wait((e) => statusLine(200)(e) && e.msg?.callId === 'up', 10_000)).msg as SipResponse;
      const tag = ok.to.tag as string;
      caller.send(port, sipRequest(caller, 'ACK', { uri: did, callId: 'up', toTag: tag, cseq: '1 ACK' }));

      const dropsBefore = { shed: await droppedTotal(), gateway: udp.kernelDrops ?? 0 };
      // Probes and in-dialog requests every 50 ms while the flood runs.
      let n = 0;
      const probing = setInterval(() => {
        n++;
        monitor.send(port, sipRequest(monitor, 'OPTIONS', { callId: `probe-${n}` }));
        caller.send(port, sipRequest(caller, 'INFO', { uri: did, callId: 'up', toTag: tag, cseq: `${n + 1} INFO` }));
      }, 50);
      const f = await flood(port, 6_000, 40).finally(() => clearInterval(probing));
      const probes = n;

      for (let i = 1; i <= probes; i++) {
        await monitor.wait((e) => statusLine(200)(e) && e.msg?.callId === `probe-${i}`, 15_000);
        await caller.wait((e) => statusLine(200)(e) && e.msg?.callId === 'up' && e.msg.cseq.seq === i + 1 && e.msg.cseq.method === 'INFO', 15_000);
      }
      // Every flood INVITE ends answered or dropped: wait until the count closes, then check it.
      const account = async (): Promise<{ answered: number; shed: number; kernel: number }> => ({
        answered: f.finals.size,
        shed: (await droppedTotal()) - dropsBefore.shed,
        kernel: (udp.kernelDrops ?? 0) - dropsBefore.gateway + (udpReceiveDrops('127.0.0.1', f.socket.address().port) ?? 0),
      });
      const deadline = Date.now() + 30_000;
      let got = await account();
      while (got.answered + got.shed + got.kernel < f.sent && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        got = await account();
      }
      assert.equal(got.answered + got.shed + got.kernel, f.sent, `answered ${got.answered}, dropped by rule ${got.shed}, by the kernel ${got.kernel}`);
      const statuses = [...f.finals.values()];
      assert.ok(statuses.every((s) => s === 200 || s === 503), `only 200 and 503: ${[...new Set(statuses)].join(', ')}`);
      assert.ok(statuses.filter((s) => s === 200).length <= 2, 'no more calls than the capacity left (3, one up)');
      assert.ok(statuses.filter((s) => s === 503).length > 0);
      f.socket.close();

      caller.send(port, sipRequest(caller, 'BYE', { uri: did, callId: 'up', toTag: tag, cseq: `${probes + 2} BYE` }));
      await caller.wait((e) => statusLine(200)(e) && e.msg?.callId === 'up' && e.msg.cseq.method === 'BYE', 15_000);
    } finally {
      caller.close();
      monitor.close();
    }
  });
});
