import assert from 'node:assert/strict';
import type { SipResponse } from '../../gateway/sip/message/message.js';
import { metricValue } from '../helpers/metric-value.js';
import { numbers, startGatewayFixture, type GatewayFixture } from './gateway-harness.js';
import { UdpPeer, sipRequest, statusLine } from './udp-peer.js';

const offer = (port: number): string =>
  `v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio ${port} RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n`;
const did = `sip:${numbers.trunkDid}@127.0.0.1`;
const shed = (reason: string): Promise<number> => metricValue('vap_sip_requests_shed_total', { action: 'refused', reason });

/** An INVITE from `peer` answered 200 (then ACKed): the call is up; resolves its To tag. */
async function callUp(fx: GatewayFixture, peer: UdpPeer, callId: string): Promise<string> {
  peer.send(fx.gateway.ports.UDP as number, sipRequest(peer, 'INVITE', { uri: did, callId, body: offer(40_000 + Math.floor(Math.random() * 1000) * 2) }));
  const ok = (await peer.wait((e) => statusLine(200)(e) && e.msg?.callId === callId, 10_000)).msg as SipResponse;
  const tag = ok.to.tag as string;
  peer.send(fx.gateway.ports.UDP as number, sipRequest(peer, 'ACK', { uri: did, callId, toTag: tag, cseq: '1 ACK' }));
  return tag;
}

async function hangUp(fx: GatewayFixture, peer: UdpPeer, callId: string, tag: string): Promise<void> {
  peer.send(fx.gateway.ports.UDP as number, sipRequest(peer, 'BYE', { uri: did, callId, toTag: tag, cseq: '9 BYE' }));
  await peer.wait((e) => statusLine(200)(e) && e.msg?.callId === callId && e.msg.cseq.method === 'BYE', 10_000);
  // The registry lets the call go when it ends (the BYE's 200 is sent first).
  const deadline = Date.now() + 10_000;
  while ([...fx.gateway.registry.all()].some((c) => c.info.sipCallId === callId)) {
    if (Date.now() > deadline) assert.fail(`${callId} still in the registry`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The refusal of `callId`: a 503 with Retry-After. */
async function refused(fx: GatewayFixture, peer: UdpPeer, callId: string): Promise<SipResponse> {
  peer.send(fx.gateway.ports.UDP as number, sipRequest(peer, 'INVITE', { uri: did, callId, body: offer(41_000) }));
  const res = (await peer.wait((e) => /^SIP\/2\.0 [2-6]\d\d /.test(e.text) && e.msg?.callId === callId, 10_000)).msg as SipResponse;
  assert.equal(res.status, 503, `${callId}: ${res.status} ${res.reason}`);
  assert.equal(res.headers.get('retry-after'), '6');
  return res;
}

/**
 * Admission by the node's capacity (docs/sip-stack.md): new calls are taken while the node has
 * room and refused 503 + Retry-After beyond, before any media or routing work, whichever source
 * sends them (here the trunk itself, with a per-source rate that would admit them all).
 */
describe('gateway: admission by capacity', function () {
  this.timeout(60_000);
  let fx: GatewayFixture;
  const signals = { lag: 0, recogniser: 0 };

  before(async () => {
    fx = await startGatewayFixture({
      ringMs: 0,
      abuse: { perSourceRate: 10_000, perSourceBurst: 10_000, retryAfterSeconds: 6 },
      admission: { maxCalls: 2, maxEventLoopLagMs: 50, loopLagMs: () => signals.lag, maxRecogniserQueue: 3, recogniserQueueDepth: () => signals.recogniser },
    });
  });
  after(async () => {
    await fx?.close();
  });

  it('takes calls while there is room, refuses the next with 503 + Retry-After before any media, and takes one again once a call ends', async () => {
    const peer = await UdpPeer.open('127.0.0.1');
    try {
      const before = await shed('node at its call capacity');
      const sessions = fx.media.openSessions;
      const a = await callUp(fx, peer, 'cap-a');
      const b = await callUp(fx, peer, 'cap-b');
      await refused(fx, peer, 'cap-c');
      assert.equal(await shed('node at its call capacity'), before + 1);
      assert.equal(fx.media.openSessions, sessions + 2, 'the refused call got no media session');
      assert.equal(fx.handler.calls.filter((c) => c.call.info.sipCallId === 'cap-c').length, 0);
      await hangUp(fx, peer, 'cap-a', a);
      const d = await callUp(fx, peer, 'cap-d');
      await hangUp(fx, peer, 'cap-b', b);
      await hangUp(fx, peer, 'cap-d', d);
    } finally {
      peer.close();
    }
  });

  it('refuses new calls while the event loop lags or the recogniser queue is deep, and takes them again after', async () => {
    const peer = await UdpPeer.open('127.0.0.1');
    try {
      const tag = await callUp(fx, peer, 'sig-up');
      signals.lag = 200;
      const lagged = await shed('event loop lagging');
      await refused(fx, peer, 'sig-lag');
      assert.equal(await shed('event loop lagging'), lagged + 1);
      signals.lag = 0;
      signals.recogniser = 4;
      const deep = await shed('recogniser queue full');
      await refused(fx, peer, 'sig-recogniser');
      assert.equal(await shed('recogniser queue full'), deep + 1);
      signals.recogniser = 3;
      const ok = await callUp(fx, peer, 'sig-ok');
      // The call up was never touched: an in-dialog request still gets through.
      peer.send(fx.gateway.ports.UDP as number, sipRequest(peer, 'OPTIONS', { uri: did, callId: 'sig-up', toTag: tag, cseq: '2 OPTIONS' }));
      await peer.wait((e) => statusLine(200)(e) && e.msg?.callId === 'sig-up' && e.msg.cseq.method === 'OPTIONS', 10_000);
      await hangUp(fx, peer, 'sig-up', tag);
      await hangUp(fx, peer, 'sig-ok', ok);
    } finally {
      signals.lag = 0;
      signals.recogniser = 0;
      peer.close();
    }
  });
});

describe('gateway: a retransmitted INVITE of a call being set up is never refused for capacity', function () {
  this.timeout(60_000);
  let fx: GatewayFixture;

  before(async () => {
    // Ringing for 1.5 s: the INVITE's transaction is live while its caller retransmits.
    fx = await startGatewayFixture({ ringMs: 1500, abuse: { perSourceRate: 10_000, perSourceBurst: 10_000, retryAfterSeconds: 6 }, admission: { maxCalls: 1 } });
  });
  after(async () => {
    await fx?.close();
  });

  it('absorbs the retransmission (same branch) while a new INVITE gets 503, and the call is answered', async () => {
    const peer = await UdpPeer.open('127.0.0.1');
    try {
      const invite = sipRequest(peer, 'INVITE', { uri: did, callId: 'ringing', branch: 'z9hG4bK-ringing-1', body: offer(40_100) });
      peer.send(fx.gateway.ports.UDP as number, invite);
      await peer.wait((e) => statusLine(180)(e) && e.msg?.callId === 'ringing', 10_000);
      peer.send(fx.gateway.ports.UDP as number, invite);
      await refused(fx, peer, 'while-ringing');
      await peer.wait((e) => statusLine(200)(e) && e.msg?.callId === 'ringing', 10_000);
      assert.equal(peer.got.filter((e) => statusLine(503)(e) && e.msg?.callId === 'ringing').length, 0, 'no 503 for the call being set up');
      assert.equal(fx.handler.calls.filter((c) => c.call.info.sipCallId === 'ringing').length, 1);
    } finally {
      peer.close();
    }
  });
});
