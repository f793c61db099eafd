import assert from 'node:assert/strict';
import type { SipResponse } from '../../gateway/sip/message/message.js';
import { metricValue } from '../helpers/metric-value.js';
import { numbers, startGatewayFixture, type GatewayFixture } from './gateway-harness.js';
import { UdpPeer, sipRequest, statusLine } from './udp-peer.js';

const offer = (port: number): string =>
  `v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio ${port} RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n`;

const quiet = async (peer: UdpPeer, ms: number): Promise<void> => {
  const before = peer.got.length;
  await new Promise((r) => setTimeout(r, ms));
  assert.equal(peer.got.length, before, `expected silence, got: ${peer.got.slice(before).map((g) => g.text.split('\r\n')[0]).join(' | ')}`);
};

/** Overload and abuse protection: answers 503 or drops, and never touches a call that is up. */
describe('gateway: overload and abuse protection', function () {
  this.timeout(30_000);
  let fx: GatewayFixture;
  const did = `sip:${numbers.trunkDid}@127.0.0.1`;

  before(async () => {
    fx = await startGatewayFixture({
      ringMs: 0,
      abuse: { perSourceRate: 1, perSourceBurst: 4, authFailureLimit: 3, maxConcurrentCalls: 1, retryAfterSeconds: 7 },
    });
  });
  after(async () => {
    await fx?.close();
  });
  const gw = (): number => fx.gateway.ports.UDP as number;

  it('drops requests from scanner User-Agents without an answer', async () => {
    const peer = await UdpPeer.open('127.0.0.1');
    try {
      peer.send(gw(), sipRequest(peer, 'OPTIONS', { extra: 'User-Agent: friendly-scanner\n' }));
      peer.send(gw(), sipRequest(peer, 'INVITE', { uri: did, extra: 'User-Agent: sipvicious 0.3\n', body: offer(40_000) }));
      await quiet(peer, 500);
    } finally {
      peer.close();
    }
  });

  it('answers 503 with Retry-After once a source exceeds its request rate', async () => {
    const peer = await UdpPeer.open('127.0.0.6');
    try {
      for (let i = 0; i < 8; i++) peer.send(gw(), sipRequest(peer, 'OPTIONS', { callId: `rate-${i}` }));
      const res = (await peer.wait(statusLine(503))).msg as SipResponse;
      assert.equal(res.headers.get('retry-after'), '7');
      assert.ok(peer.responses(200, 'OPTIONS').length >= 4);
    } finally {
      peer.close();
    }
  });

  it('drops a source after repeated authentication failures (403 unknown source)', async () => {
    const peer = await UdpPeer.open('127.0.0.7');
    try {
      for (let i = 0; i < 3; i++) {
        peer.send(gw(), sipRequest(peer, 'INVITE', { uri: did, callId: `scan-${i}`, body: offer(40_000) }));
        await peer.wait((e) => statusLine(403)(e) && e.msg?.callId === `scan-${i}`);
      }
      assert.ok(fx.gateway.guard.isBlocked('127.0.0.7'));
      peer.send(gw(), sipRequest(peer, 'OPTIONS', { callId: 'after-block' }));
      await quiet(peer, 400);
    } finally {
      peer.close();
    }
  });

  it('answers 503 beyond the global call limit while the call already up keeps working', async () => {
    const peer = await UdpPeer.open('127.0.0.1');
    try {
      peer.send(gw(), sipRequest(peer, 'INVITE', { uri: did, callId: 'first', body: offer(40_010) }));
      const ok = (await peer.wait((e) => statusLine(200)(e) && e.msg?.callId === 'first')).msg as SipResponse;
      const tag = ok.to.tag as string;
      peer.send(gw(), sipRequest(peer, 'ACK', { uri: did, callId: 'first', toTag: tag, cseq: '1 ACK' }));
      const refusals = await metricValue('vap_sip_requests_shed_total', { action: 'refused', reason: 'global concurrency limit' });
      peer.send(gw(), sipRequest(peer, 'INVITE', { uri: did, callId: 'second', body: offer(40_020) }));
      const busy = (await peer.wait((e) => statusLine(503)(e) && e.msg?.callId === 'second')).msg as SipResponse;
      assert.equal(busy.headers.get('retry-after'), '7');
      assert.equal(await metricValue('vap_sip_requests_shed_total', { action: 'refused', reason: 'global concurrency limit' }), refusals + 1, 'counted as an abuse-guard refusal');
      // In-dialog requests bypass every limit (RFC 3261 sec. 12.2.2 applies, not the guard).
      peer.send(gw(), sipRequest(peer, 'INFO', { uri: did, callId: 'first', toTag: tag, cseq: '2 INFO', extra: 'Content-Type: application/dtmf-relay\n' }).replace('Content-Length: 0\n\n', 'Content-Length: 24\n\nSignal=5\r\nDuration=160\r\n'));
      await peer.wait((e) => statusLine(200)(e) && e.msg?.callId === 'first' && e.msg.cseq.method === 'INFO');
      const seen = fx.handler.last();
      assert.deepEqual(seen?.dtmf.map((d) => [d.digit, d.via]), [['5', 'info']]);
      peer.send(gw(), sipRequest(peer, 'BYE', { uri: did, callId: 'first', toTag: tag, cseq: '3 BYE' }));
      await peer.wait((e) => statusLine(200)(e) && e.msg?.callId === 'first' && e.msg.cseq.method === 'BYE');
    } finally {
      peer.close();
    }
  });

  it('answers a resent BYE again with 200 after its dialog is gone, though its source is over its rate (the transaction absorbs it, sec. 17.2.2)', async () => {
    const peer = await UdpPeer.open('127.0.0.1');
    try {
      await new Promise((r) => setTimeout(r, 4_000)); // the source's bucket refills (1/s, burst 4) after the tests before
      peer.send(gw(), sipRequest(peer, 'INVITE', { uri: did, callId: 'resent-bye', body: offer(40_030) }));
      const ok = (await peer.wait((e) => statusLine(200)(e) && e.msg?.callId === 'resent-bye')).msg as SipResponse;
      const tag = ok.to.tag as string;
      peer.send(gw(), sipRequest(peer, 'ACK', { uri: did, callId: 'resent-bye', toTag: tag, cseq: '1 ACK' }));
      const bye = sipRequest(peer, 'BYE', { uri: did, callId: 'resent-bye', toTag: tag, cseq: '2 BYE' });
      peer.send(gw(), bye);
      const isByeAnswer = (status: number) => (e: { text: string; msg?: { callId: string; cseq: { method: string } } }) => statusLine(status)(e) && e.msg?.callId === 'resent-bye' && e.msg.cseq.method === 'BYE';
      await peer.wait(isByeAnswer(200));
      // The source spends its tokens: the next new request from it is refused.
      for (let i = 0; i < 6; i++) peer.send(gw(), sipRequest(peer, 'OPTIONS', { callId: `spend-${i}` }));
      await peer.wait((e) => statusLine(503)(e) && e.msg?.callId.startsWith('spend-') === true);
      // As a UAC whose 200 was late resends its BYE (Timer E): the dialog is gone, its transaction is not.
      const before = peer.got.length;
      peer.send(gw(), bye);
      await peer.wait((e) => peer.got.indexOf(e) >= before && isByeAnswer(200)(e));
      assert.equal(peer.got.slice(before).filter(isByeAnswer(503)).length, 0, 'the resent BYE was refused as if it were a new request');
    } finally {
      peer.close();
    }
  });
});
