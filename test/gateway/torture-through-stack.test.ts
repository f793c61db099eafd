import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { tortureCases } from '../sip-torture/expectations.js';
import { loadBitExactMessage, loadTortureMessage } from '../sip-torture/load-fixture.js';
import { numbers, startGatewayFixture, type GatewayFixture, type SeenCall } from './gateway-harness.js';
import type { SipRequest, SipResponse } from '../../gateway/sip/message/message.js';
import { waitFor } from '../helpers/sipp.js';
import { UdpPeer, sipRequest, statusLine } from './udp-peer.js';

/** Polls `get` until it returns something defined, within `ms`. */
async function waitUntil<T>(get: () => T | undefined, ms: number): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = get();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`nothing within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** What came back on a fresh TCP connection for one message: the status line, if any. */
async function overTcp(port: number, octets: Buffer): Promise<{ status?: number; closed: boolean }> {
  const socket = connect({ host: '127.0.0.1', port });
  await new Promise<void>((r) => socket.once('connect', r));
  let text = '';
  let closed = false;
  socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
  socket.on('close', () => (closed = true));
  socket.write(octets);
  const end = Date.now() + 400;
  while (!/^SIP\/2\.0 \d{3}/.test(text) && !closed && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
  socket.destroy();
  const m = /^SIP\/2\.0 (\d{3})/.exec(text);
  return { ...(m ? { status: Number(m[1]) } : {}), closed };
}

/**
 * The RFC 4475 torture messages through the whole stack (transport, parser, core, router): the
 * statuses the core owns come back as the RFC says, and the process keeps answering afterwards.
 */
describe('gateway: RFC 4475 torture messages through the stack', function () {
  this.timeout(60_000);
  let fx: GatewayFixture;

  before(async () => {
    fx = await startGatewayFixture({ ringMs: 0 });
  });
  after(async () => {
    await fx?.close();
  });

  const coreStatus = (ua: string | undefined): number | undefined => {
    const n = Number(/^(\d{3})/.exec(ua ?? '')?.[1]);
    return [406, 416, 420, 501].includes(n) ? n : undefined;
  };

  for (const c of tortureCases) {
    const expected = c.outcome === 'reject' ? c.status : coreStatus(c.ua);
    if (expected === undefined || c.stream === 'waits-for-more' || c.stream === 'datagram-only') continue;
    if (c.stream === 'closes-connection') {
      // Framing is lost (no usable Content-Length): sec. 18.3 leaves only closing the connection.
      it(`${c.name} (sec. ${c.section}) over TCP closes the connection`, async () => {
        const got = await overTcp(fx.gateway.ports.TCP as number, loadTortureMessage(c.name));
        assert.equal(got.closed, true);
      });
      continue;
    }
    it(`${c.name} (sec. ${c.section}) over TCP is answered ${expected}`, async () => {
      const got = await overTcp(fx.gateway.ports.TCP as number, loadTortureMessage(c.name));
      assert.equal(got.status, expected);
    });
  }

  /**
   * inv2543 as an RFC 2543 UAC at `peer` would send it: its Via sent-by is the peer (the fixture's
   * names no host of ours), and the SDP points at loopback, so nothing leaves 127.0.0.1.
   */
  function inv2543From(peer: UdpPeer, edit: (text: string) => string = (t) => t): Buffer {
    const text = loadTortureMessage('inv2543').toString('latin1')
      .replace('Via: SIP/2.0/UDP iftgw.example.com', `Via: SIP/2.0/UDP 127.0.0.1:${peer.port}`)
      .replace(/192\.0\.2\.5/g, '127.0.0.1');
    return Buffer.from(edit(text), 'latin1');
  }

  it('inv2543 (sec. 3.4.1) over UDP is routed like any INVITE: 404 for its unknown number, not 400', async () => {
    const peer = await UdpPeer.open();
    try {
      peer.socket.send(inv2543From(peer), fx.gateway.ports.UDP as number, '127.0.0.1');
      const res = await peer.wait((e) => /^SIP\/2\.0 [2-6]\d\d /.test(e.text), 3000);
      assert.match(res.text, /^SIP\/2\.0 404 /);
    } finally {
      peer.close();
    }
  });

  /**
   * inv2543 to the trunk's DID from `caller` (Call-ID `callId`), then the caller's ACK without
   * branch: the call the handler got, the 200's To tag and the handler's call count before.
   */
  async function rfc2543Call(peer: UdpPeer, caller: string, callId: string): Promise<{ seen: SeenCall; toTag: string; before: number }> {
    const port = fx.gateway.ports.UDP as number;
    const before = fx.handler.calls.length;
    const invite = inv2543From(peer, (t) => t
      .replace('INVITE sip:UserB@example.com SIP/2.0', `INVITE sip:${numbers.trunkDid}@127.0.0.1 SIP/2.0`)
      .replace('From: <sip:+13035551111@ift.client.example.net;user=phone>', `From: <sip:${caller}@ift.client.example.net>`)
      .replace('Call-ID: inv2543.1717@ift.client.example.com', `Call-ID: ${callId}`));
    peer.socket.send(invite, port, '127.0.0.1');
    const ok = (await peer.wait((e) => statusLine(200)(e) && e.msg?.callId === callId, 5000)).msg as SipResponse;
    // A retransmission is absorbed by the INVITE's transaction (sec. 17.2.3 matching without branch).
    peer.socket.send(invite, port, '127.0.0.1');
    assert.match(ok.headers.get('contact') ?? '', /^<sip:gateway@127\.0\.0\.1:\d+>$/);
    const toTag = ok.to.tag as string;
    peer.socket.send(Buffer.from(`ACK sip:gateway@127.0.0.1:${port} SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:${peer.port}\r\n` +
      `From: <sip:${caller}@ift.client.example.net>\r\nTo: sip:+16505552222@ss1.example.net;tag=${toTag}\r\n` +
      `Call-ID: ${callId}\r\nCSeq: 56 ACK\r\nContent-Length: 0\r\n\r\n`), port, '127.0.0.1');
    const seen = await waitUntil(() => fx.handler.calls[before], 3000);
    assert.equal(seen.call.info.caller, caller);
    return { seen, toTag, before };
  }

  it('an RFC 2543 caller (no Contact, branch or From tag) gets its call and ends it with its own BYE (sec. 3.4.1)', async () => {
    const peer = await UdpPeer.open();
    try {
      const { seen, toTag, before } = await rfc2543Call(peer, 'caller2543', 'inv2543-caller-bye');
      peer.socket.send(Buffer.from(`BYE sip:gateway@127.0.0.1:${fx.gateway.ports.UDP} SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:${peer.port}\r\n` +
        `From: <sip:caller2543@ift.client.example.net>\r\nTo: sip:+16505552222@ss1.example.net;tag=${toTag}\r\n` +
        'Call-ID: inv2543-caller-bye\r\nCSeq: 57 BYE\r\nContent-Length: 0\r\n\r\n'), fx.gateway.ports.UDP as number, '127.0.0.1');
      await peer.wait((e) => statusLine(200)(e) && e.msg?.cseq.method === 'BYE', 3000);
      await waitUntil(() => seen.endReason, 3000);
      assert.equal(seen.endReason, 'remote-bye');
      assert.equal(fx.handler.calls.length, before + 1, 'one call for the INVITE and its retransmission');
    } finally {
      peer.close();
    }
  });

  it('an RFC 2543 caller without Contact is reached by the gateway\'s BYE at the INVITE\'s source (sec. 3.4.1)', async () => {
    const peer = await UdpPeer.open();
    try {
      // Caller `gw-hangup`: the handler hangs up after 1.5 s.
      const { seen, before } = await rfc2543Call(peer, 'gw-hangup', 'inv2543-gateway-bye');
      // Addressed to its From URI through the Record-Route it sent (a strict router: its URI is
      // the Request-URI), with no To tag, as the caller gave no From tag.
      const bye = (await peer.wait((e) => e.text.startsWith('BYE '), 5000)).msg as SipRequest;
      assert.equal(bye.to.tag, undefined);
      assert.equal(bye.uri, 'sip:UserB@example.com;maddr=ss1.example.com');
      assert.deepEqual(bye.headers.getAll('route'), ['<sip:gw-hangup@ift.client.example.net>']);
      peer.socket.send(Buffer.from(`SIP/2.0 200 OK\r\n${['via', 'from', 'to', 'call-id', 'cseq'].map((h) => `${h}: ${bye.headers.get(h)}\r\n`).join('')}Content-Length: 0\r\n\r\n`), fx.gateway.ports.UDP as number, '127.0.0.1');
      await waitUntil(() => seen.endReason, 3000);
      assert.equal(seen.endReason, 'test-hangup');
      assert.equal(fx.handler.calls.length, before + 1, 'one call for the INVITE and its retransmission');
    } finally {
      peer.close();
    }
  });

  it('answers the bit-exact baddn.dat (no empty line after the headers) over UDP 400 Bad From Header', async () => {
    const peer = await UdpPeer.open();
    try {
      peer.socket.send(loadBitExactMessage('baddn'), fx.gateway.ports.UDP as number, '127.0.0.1');
      // The answer copies the malformed From (RFC 3261 sec. 8.2.6.2), so it is read as text.
      const { text } = await peer.wait((e) => statusLine(400)(e), 5000);
      assert.match(text, /^SIP\/2\.0 400 Bad From Header\r\n/);
      assert.match(text, /\r\nCall-ID: baddn\.31415@c\.example\.com\r\n/);
      assert.match(text, /\r\nCSeq: +3923239 OPTIONS\r\n/);
    } finally {
      peer.close();
    }
  });

  it('keeps answering after every torture message over UDP and TCP', async () => {
    const peer = await UdpPeer.open();
    try {
      for (const c of tortureCases) {
        const octets = loadTortureMessage(c.name);
        peer.socket.send(octets, fx.gateway.ports.UDP as number, '127.0.0.1');
        await overTcp(fx.gateway.ports.TCP as number, octets);
      }
      peer.send(fx.gateway.ports.UDP as number, sipRequest(peer, 'OPTIONS', { callId: 'still-alive' }));
      await peer.wait((e) => statusLine(200)(e) && e.msg?.callId === 'still-alive', 3000);
      // An INVITE among them may still be routing when the OPTIONS is answered: none stays.
      await waitFor(() => fx.gateway.registry.inProgress === 0, 5000).catch(() => undefined);
      assert.equal(fx.gateway.registry.inProgress, 0, 'nothing is left half set up');
    } finally {
      peer.close();
    }
  });

  it('survives 3,000 seeded random mutations of them over UDP and still answers', async () => {
    const fuzzer = await UdpPeer.open('127.0.0.30');
    const checker = await UdpPeer.open();
    try {
      let seed = 4475;
      const rand = (n: number): number => {
        seed = (seed * 1103515245 + 12345) & 0x7fffffff;
        return seed % n;
      };
      const bases = tortureCases.map((c) => loadTortureMessage(c.name));
      for (let i = 0; i < 3000; i++) {
        const msg = Buffer.from(bases[rand(bases.length)] as Buffer);
        for (let k = 0, n = 1 + rand(8); k < n; k++) msg[rand(msg.length)] = rand(256);
        fuzzer.socket.send(msg, fx.gateway.ports.UDP as number, '127.0.0.1');
        if (i % 200 === 0) await new Promise((r) => setTimeout(r, 5));
      }
      checker.send(fx.gateway.ports.UDP as number, sipRequest(checker, 'OPTIONS', { callId: 'after-fuzz' }));
      await checker.wait((e) => statusLine(200)(e) && e.msg?.callId === 'after-fuzz', 5000);
    } finally {
      fuzzer.close();
      checker.close();
    }
  });
});
