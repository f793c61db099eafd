import assert from 'node:assert/strict';
import { pino } from 'pino';
import { EdgeSources } from '../../gateway/inbound/edge-source.js';
import { parseOutboundProxy, proxyRoute } from '../../gateway/outbound/sip-originator.js';
import type { SipRequest, SipResponse } from '../../gateway/sip/message/message.js';
import { testBox } from '../helpers/resource-documents.js';
import { fixtureOriginator, numbers, startGatewayFixture, type GatewayFixture } from './gateway-harness.js';
import { outboundRequest } from './outbound-sipp-uas.js';
import { UdpPeer, sipRequest, statusLine } from './udp-peer.js';

/** The edge's address in these tests; the fixture's trunk terminates at 127.0.0.1. */
const EDGE = '127.0.0.10';
const did = `sip:${numbers.trunkDid}@127.0.0.1`;
const offer = (port: number): string =>
  `v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio ${port} RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n`;

let calls = 0;
/** An INVITE for the trunk's DID, with these X-VAP-Source values. */
const invite = (peer: UdpPeer, sources: readonly string[]): { text: string; callId: string } => {
  const callId = `edge-${++calls}`;
  const extra = sources.map((s) => `X-VAP-Source: ${s}\n`).join('');
  return { text: sipRequest(peer, 'INVITE', { uri: did, callId, extra, body: offer(40_000) }), callId };
};

/** The final response to the INVITE with this Call-ID. */
async function finalFor(peer: UdpPeer, callId: string, ms = 5000): Promise<SipResponse> {
  const hit = await peer.wait((e) => e.msg !== undefined && !e.msg.isRequest && e.msg.callId === callId && (e.msg as SipResponse).status >= 200, ms);
  return hit.msg as SipResponse;
}

/** ACK then BYE for an answered INVITE (in-dialog requests go straight to the gateway here: no Record-Route). */
function hangUp(peer: UdpPeer, port: number, ok: SipResponse): void {
  const toTag = ok.to.tag as string;
  peer.send(port, sipRequest(peer, 'ACK', { uri: did, callId: ok.callId, toTag, cseq: '1 ACK' }));
  peer.send(port, sipRequest(peer, 'BYE', { uri: did, callId: ok.callId, toTag, cseq: '2 BYE' }));
}

describe('edge sources (X-VAP-Source)', () => {
  const edge = new EdgeSources([EDGE]);

  it('takes the carrier address the edge passed on, and only from the edge', () => {
    assert.deepEqual(edge.sourceOf(EDGE, ['192.0.2.7']), { kind: 'source', address: '192.0.2.7', viaEdge: true });
    assert.deepEqual(edge.sourceOf(`::ffff:${EDGE}`, [' 2001:DB8::7 ']), { kind: 'source', address: '2001:db8::7', viaEdge: true });
    assert.deepEqual(edge.sourceOf('192.0.2.7', []), { kind: 'source', address: '192.0.2.7', viaEdge: false });
    assert.equal(edge.sourceOf('192.0.2.7', ['192.0.2.8']).kind, 'refused');
    assert.deepEqual(edge.sourceOf(EDGE, []), { kind: 'refused', status: 403, reason: 'Forbidden (the edge sent no X-VAP-Source)' });
    assert.deepEqual(edge.sourceOf(EDGE, ['carrier.example.com']), { kind: 'refused', status: 400, reason: 'Bad X-VAP-Source Header' });
    assert.deepEqual(edge.sourceOf(EDGE, ['192.0.2.7', '192.0.2.8']), { kind: 'refused', status: 400, reason: 'Bad X-VAP-Source Header' });
    // Without an edge the header is refused from anyone: a carrier must not choose its own identity.
    assert.equal(new EdgeSources([]).sourceOf(EDGE, ['192.0.2.7']).kind, 'refused');
  });

  it('counts admission under the carrier address for the edge, under the packet source for others', () => {
    const header = (value: string | undefined) => (key: string) => (key === 'x-vap-source' ? value : undefined);
    assert.equal(edge.admissionKey(EDGE, header('192.0.2.7')), '192.0.2.7');
    assert.equal(edge.admissionKey(EDGE, header(undefined)), EDGE);
    assert.equal(edge.admissionKey(EDGE, header('nonsense')), EDGE);
    assert.equal(edge.admissionKey('192.0.2.9', header('192.0.2.7')), '192.0.2.9');
  });
});

describe('gateway behind a SIP edge (sip.edge.addresses)', function () {
  this.timeout(30_000);
  let fx: GatewayFixture;
  const gw = (): number => fx.gateway.ports.UDP as number;

  before(async () => {
    fx = await startGatewayFixture({ ringMs: 0, edgeAddresses: [EDGE], abuse: { authFailureLimit: 3, perSourceRate: 1, perSourceBurst: 6 } });
  });
  after(async () => {
    await fx?.close();
  });

  it("answers a call the edge relays for a trunk's termination address, with the carrier as the call's source", async () => {
    const peer = await UdpPeer.open(EDGE);
    try {
      const { text, callId } = invite(peer, ['127.0.0.1']);
      peer.send(gw(), text);
      const ok = await finalFor(peer, callId);
      assert.equal(ok.status, 200);
      const seen = fx.handler.calls.find((c) => c.call.info.sipCallId === callId);
      assert.equal(seen?.call.info.remoteAddress, '127.0.0.1');
      hangUp(peer, gw(), ok);
      await peer.wait((e) => e.text.startsWith('SIP/2.0 200') && e.text.includes('CSeq: 2 BYE'));
    } finally {
      peer.close();
    }
  });

  it('refuses calls sent around the edge (403), even from a trunk address, and a forged header (403)', async () => {
    const carrier = await UdpPeer.open('127.0.0.1');
    try {
      const direct = invite(carrier, []);
      carrier.send(gw(), direct.text);
      assert.equal((await finalFor(carrier, direct.callId)).reason, 'Forbidden (calls come through the SIP edge)');
      const forged = invite(carrier, ['127.0.0.1']);
      carrier.send(gw(), forged.text);
      const res = await finalFor(carrier, forged.callId);
      assert.equal(res.status, 403);
      assert.equal(res.reason, 'Forbidden (X-VAP-Source is only taken from the SIP edge)');
    } finally {
      carrier.close();
    }
  });

  it('refuses an edge request without the header (403) or with a malformed one (400)', async () => {
    const peer = await UdpPeer.open(EDGE);
    try {
      const none = invite(peer, []);
      peer.send(gw(), none.text);
      assert.equal((await finalFor(peer, none.callId)).reason, 'Forbidden (the edge sent no X-VAP-Source)');
      const bad = invite(peer, ['gw.example.com']);
      peer.send(gw(), bad.text);
      const res = await finalFor(peer, bad.callId);
      assert.equal(res.status, 400);
      assert.equal(res.reason, 'Bad X-VAP-Source Header');
    } finally {
      peer.close();
    }
  });

  it("blocks a carrier that fails authentication, not the edge: the edge's other carriers and probes go on", async () => {
    const peer = await UdpPeer.open(EDGE);
    try {
      for (let i = 0; i < 3; i++) {
        const scan = invite(peer, ['127.0.0.77']);
        peer.send(gw(), scan.text);
        assert.equal((await finalFor(peer, scan.callId)).reason, 'Forbidden (source is not a trunk termination address)');
      }
      assert.ok(fx.gateway.guard.isBlocked('127.0.0.77'));
      assert.equal(fx.gateway.guard.isBlocked(EDGE), false);
      const blocked = invite(peer, ['127.0.0.77']);
      peer.send(gw(), blocked.text);
      await assert.rejects(finalFor(peer, blocked.callId, 700), /nothing matching/);
      peer.send(gw(), sipRequest(peer, 'OPTIONS', { callId: 'probe-1' }));
      await peer.wait((e) => e.text.startsWith('SIP/2.0 200') && e.text.includes('Call-ID: probe-1'));
      const good = invite(peer, ['127.0.0.1']);
      peer.send(gw(), good.text);
      const ok = await finalFor(peer, good.callId);
      assert.equal(ok.status, 200);
      hangUp(peer, gw(), ok);
    } finally {
      peer.close();
    }
  });

  it("keeps one rate bucket per carrier behind the edge: one carrier's burst does not refuse another's call", async () => {
    const peer = await UdpPeer.open(EDGE);
    try {
      // 127.0.0.88 is no trunk: each INVITE within its bucket is refused 403, the excess 503.
      const burst = Array.from({ length: 9 }, () => invite(peer, ['127.0.0.88']));
      for (const b of burst) peer.send(gw(), b.text);
      await peer.wait(statusLine(503));
      const good = invite(peer, ['127.0.0.1']);
      peer.send(gw(), good.text);
      const ok = await finalFor(peer, good.callId);
      assert.equal(ok.status, 200);
      hangUp(peer, gw(), ok);
    } finally {
      peer.close();
    }
  });
});

describe('outbound calls through the edge (sip.edge.outboundProxy)', function () {
  this.timeout(30_000);
  let fx: GatewayFixture;

  before(async () => {
    fx = await startGatewayFixture({ ringMs: 0 });
  });
  after(async () => {
    await fx?.close();
  });

  it('parses the proxy URI and writes a loose Route to it', () => {
    assert.deepEqual(parseOutboundProxy('sip:10.0.0.10'), { host: '10.0.0.10', port: 5060, transport: 'udp' });
    assert.deepEqual(parseOutboundProxy('sip:[2001:db8::a]:5070;transport=tcp;lr'), { host: '2001:db8::a', port: 5070, transport: 'tcp' });
    assert.equal(proxyRoute({ host: '2001:db8::a', port: 5070, transport: 'tcp' }), '<sip:[2001:db8::a]:5070;lr;transport=tcp>');
  });

  it("sends the INVITE to the proxy with a Route to it and the trunk's Request-URI (a name the proxy resolves), and the CANCEL the same way", async () => {
    const proxy = await UdpPeer.open(EDGE);
    try {
      const originator = fixtureOriginator(fx, testBox(), {
        logger: pino({ level: 'silent' }),
        nativeRoute: { host: 'carrier.example.net', port: 5060, transport: 'udp' },
        outboundProxy: { host: EDGE, port: proxy.port, transport: 'udp' },
      });
      const abort = new AbortController();
      const dialled = originator.originate({ ...outboundRequest(fx.ids.tenantId, '', { signal: abort.signal }), from: { e164: numbers.trunkDid, phoneNumberId: '00000000-0000-4000-8000-000000000001', sipTrunkId: null } });
      const inv = (await proxy.wait((e) => e.msg?.isRequest === true && (e.msg as SipRequest).method === 'INVITE')).msg as SipRequest;
      assert.equal(inv.uri, 'sip:+919812345678@carrier.example.net;user=phone');
      assert.deepEqual(inv.headers.values('route'), [`<sip:${EDGE}:${proxy.port};lr>`]);
      const via = inv.headers.getAll('via')[0] ?? '';
      // Ringing, then the caller gives up: the CANCEL follows the INVITE's route (RFC 3261 sec. 9.1).
      proxy.send(fx.gateway.ports.UDP as number, `SIP/2.0 180 Ringing\nVia: ${via}\nFrom: ${inv.headers.get('from')}\nTo: ${inv.headers.get('to')};tag=callee\nCall-ID: ${inv.callId}\nCSeq: 1 INVITE\nContent-Length: 0\n\n`);
      await new Promise((r) => setTimeout(r, 200));
      abort.abort();
      const cancel = (await proxy.wait((e) => e.msg?.isRequest === true && (e.msg as SipRequest).method === 'CANCEL')).msg as SipRequest;
      assert.deepEqual(cancel.headers.values('route'), [`<sip:${EDGE}:${proxy.port};lr>`]);
      assert.equal(cancel.uri, inv.uri);
      proxy.send(fx.gateway.ports.UDP as number, `SIP/2.0 487 Request Terminated\nVia: ${via}\nFrom: ${inv.headers.get('from')}\nTo: ${inv.headers.get('to')};tag=callee\nCall-ID: ${inv.callId}\nCSeq: 1 INVITE\nContent-Length: 0\n\n`);
      const result = await dialled;
      assert.equal(result.outcome, 'failed');
    } finally {
      proxy.close();
    }
  });
});
