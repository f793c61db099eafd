import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { pino } from 'pino';
import { systemClock } from '../../../core/clock.js';
import { Dialog } from '../dialog/dialog.js';
import { Headers } from '../message/headers.js';
import { SipRequest, type SipResponse } from '../message/message.js';
import { UdpPeer as Peer, sipRequest as request, statusLine as status } from '../../../test/gateway/udp-peer.js';
import { TransportSet } from '../transport/transport-set.js';
import { SipError } from './sip-error.js';
import { SipStack } from './sip-stack.js';

describe('SipStack core over UDP', function () {
  this.timeout(10_000);
  let stack: SipStack;
  let transports: TransportSet;
  let port: number;
  let peer: Peer;
  const dialogs: Dialog[] = [];

  before(async () => {
    stack = new SipStack({ clock: systemClock, logger: pino({ level: 'silent' }), timers: { T1: 50, T2: 400, T4: 500 }, publicAddress: '127.0.0.1' });
    stack.onRequest((sreq) => {
      if (sreq.request.method === 'OPTIONS') return stack.answerOptions(sreq);
      // INVITE: a dialog answered at once with a fixed SDP; re-offers are answered the same way.
      const d = Dialog.fromInvite(stack, sreq);
      d.offerHandler = (offer) => {
        if (offer?.includes('G729')) throw new SipError(488);
        return 'v=0\r\n';
      };
      dialogs.push(d);
      d.accept(sreq, 'v=0\r\n');
    });
    transports = await TransportSet.start({ host: '127.0.0.1', port: 0, tcpPort: 0 }, stack.receive);
    stack.attach(transports);
    port = transports.ports.UDP as number;
  });
  after(async () => {
    await transports.close();
  });
  beforeEach(async () => {
    peer = await Peer.open();
  });
  afterEach(() => peer.close());

  it('answers a malformed request with 400 naming the problem, and keeps serving', async () => {
    peer.send(port, request(peer, 'OPTIONS', { cseq: 'abc OPTIONS' }));
    const res = await peer.wait(status(400));
    // The reason phrase names the header (RFC 3261 sec. 21.4.1); a 399 Warning says what is wrong with it.
    assert.match(res.text, /^SIP\/2\.0 400 Bad CSeq Header\r\n/);
    assert.match(res.text, /\r\nWarning: 399 voice-agent-platform "CSeq number out of range: abc OPTIONS"\r\n/);
    peer.send(port, 'garbage that is no SIP at all\r\n\r\n');
    peer.send(port, request(peer, 'OPTIONS'));
    await peer.wait(status(200));
  });

  it('answers OPTIONS with Allow, Accept and Supported (RFC 3261 sec. 11.2)', async () => {
    peer.send(port, request(peer, 'OPTIONS'));
    const res = (await peer.wait(status(200))).msg as SipResponse;
    assert.match(res.headers.get('allow') ?? '', /INVITE, ACK, BYE, CANCEL, OPTIONS, UPDATE, INFO, REFER/);
    assert.equal(res.headers.get('accept'), 'application/sdp');
    assert.ok(res.headers.has('supported'));
    assert.ok(res.to.tag);
  });

  it('answers 501 to an unknown method and 405 with Allow to a known one it does not implement', async () => {
    peer.send(port, request(peer, 'FROBNICATE'));
    await peer.wait(status(501));
    peer.send(port, request(peer, 'REGISTER'));
    const res = (await peer.wait(status(405))).msg as SipResponse;
    assert.match(res.headers.get('allow') ?? '', /INVITE/);
  });

  it('answers 505 to another SIP version, 416 to a non-SIP URI scheme, 420 to an unknown Require', async () => {
    peer.send(port, request(peer, 'OPTIONS').replace('SIP/2.0\n', 'SIP/7.0\n'));
    await peer.wait(status(505));
    peer.send(port, request(peer, 'OPTIONS', { uri: 'mailto:someone@example.com' }));
    await peer.wait(status(416));
    peer.send(port, request(peer, 'OPTIONS', { extra: 'Require: teleportation\n' }));
    const res = (await peer.wait(status(420))).msg as SipResponse;
    assert.equal(res.headers.get('unsupported'), 'teleportation');
  });

  it('answers 481 to in-dialog requests and CANCELs that match nothing', async () => {
    peer.send(port, request(peer, 'BYE', { toTag: 'nosuch' }));
    await peer.wait((e) => status(481)(e) && e.msg?.cseq.method === 'BYE');
    peer.send(port, request(peer, 'CANCEL', { callId: 'nobody' }));
    await peer.wait((e) => status(481)(e) && e.msg?.cseq.method === 'CANCEL');
    peer.send(port, request(peer, 'BYE', { callId: 'out-of-dialog' }));
    await peer.wait((e) => status(481)(e) && e.msg?.callId === 'out-of-dialog');
  });

  it('retransmits its 2xx until the ACK, then stops (RFC 3261 sec. 13.3.1.4)', async () => {
    peer.send(port, request(peer, 'INVITE', { callId: 'acked', body: 'v=0\r\n' }));
    await peer.wait((e) => status(200)(e) && e.msg?.callId === 'acked');
    await new Promise((r) => setTimeout(r, 300));
    const ok = peer.responses(200, 'INVITE').filter((r) => r.callId === 'acked');
    assert.ok(ok.length >= 3, `2xx sent ${ok.length} times before the ACK`);
    const tag = ok[0]?.to.tag as string;
    peer.send(port, request(peer, 'ACK', { callId: 'acked', toTag: tag, cseq: '1 ACK' }));
    await new Promise((r) => setTimeout(r, 100));
    const count = peer.responses(200, 'INVITE').length;
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(peer.responses(200, 'INVITE').length, count, 'no retransmission after the ACK');
    assert.equal(dialogs.find((d) => d.callId === 'acked')?.state, 'confirmed');
  });

  it('sends BYE when no ACK comes within 64*T1', async () => {
    peer.send(port, request(peer, 'INVITE', { callId: 'never-acked', body: 'v=0\r\n' }));
    const bye = await peer.wait((e) => e.text.startsWith('BYE ') && e.msg?.callId === 'never-acked', 5000);
    assert.equal((bye.msg as SipRequest).from.tag, dialogs.find((d) => d.callId === 'never-acked')?.localTag);
  });

  it('answers a re-INVITE during its own pending re-INVITE with 491 (glare, sec. 14.2) and a bad re-offer with 488', async () => {
    peer.send(port, request(peer, 'INVITE', { callId: 'glare', body: 'v=0\r\n' }));
    const ok = (await peer.wait((e) => status(200)(e) && e.msg?.callId === 'glare')).msg as SipResponse;
    const tag = ok.to.tag as string;
    peer.send(port, request(peer, 'ACK', { callId: 'glare', toTag: tag, cseq: '1 ACK' }));
    const dialog = dialogs.find((d) => d.callId === 'glare') as Dialog;
    await new Promise((r) => setTimeout(r, 50));
    const ours = dialog.reinvite('v=0\r\n');
    await peer.wait((e) => e.text.startsWith('INVITE ') && e.msg?.callId === 'glare');
    peer.send(port, request(peer, 'INVITE', { callId: 'glare', toTag: tag, cseq: '2 INVITE', body: 'v=0\r\n' }));
    await peer.wait((e) => status(491)(e) && e.msg?.callId === 'glare');
    const theirInvite = peer.got.find((e) => e.text.startsWith('INVITE ') && e.msg?.callId === 'glare')?.msg as SipRequest;
    // Refuse ours with 491 too: the dialog surfaces it as SipError(491).
    peer.send(port, `SIP/2.0 491 Request Pending\nVia: ${theirInvite.headers.get('via')}\nFrom: ${theirInvite.headers.get('from')}\nTo: ${theirInvite.headers.get('to')}\nCall-ID: glare\nCSeq: ${theirInvite.headers.get('cseq')}\nContent-Length: 0\n\n`.replace(/\n/g, '\r\n'));
    await assert.rejects(ours, (e: unknown) => e instanceof SipError && e.status === 491);
    peer.send(port, request(peer, 'INVITE', { callId: 'glare', toTag: tag, cseq: '3 INVITE', body: 'v=0\r\nm=audio 1 RTP/AVP 18\r\na=rtpmap:18 G729/8000\r\n' }));
    await peer.wait((e) => status(488)(e) && e.msg?.callId === 'glare');
    assert.equal(dialog.state, 'confirmed', 'a refused re-offer leaves the dialog up');
    peer.send(port, request(peer, 'BYE', { callId: 'glare', toTag: tag, cseq: '4 BYE' }));
    await peer.wait((e) => status(200)(e) && e.msg?.cseq.method === 'BYE');
    assert.equal(dialog.state, 'terminated');
  });

  it('keeps a failure after a target refresh from becoming an unhandled rejection (which ends the process)', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown): void => void unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      peer.send(port, request(peer, 'INVITE', { callId: 'refresh-bug', body: 'v=0\r\n' }));
      const ok = (await peer.wait((e) => status(200)(e) && e.msg?.callId === 'refresh-bug')).msg as SipResponse;
      const tag = ok.to.tag as string;
      peer.send(port, request(peer, 'ACK', { callId: 'refresh-bug', toTag: tag, cseq: '1 ACK' }));
      const dialog = dialogs.find((d) => d.callId === 'refresh-bug') as Dialog;
      dialog.on('modify', () => {
        throw new Error('a modify listener bug');
      });
      await new Promise((r) => setTimeout(r, 50));
      peer.send(port, request(peer, 'INVITE', { callId: 'refresh-bug', toTag: tag, cseq: '2 INVITE', body: 'v=0\r\n' }));
      await peer.wait((e) => status(200)(e) && e.msg?.callId === 'refresh-bug' && e.msg.cseq.seq === 2);
      peer.send(port, request(peer, 'BYE', { callId: 'refresh-bug', toTag: tag, cseq: '3 BYE' }));
      await peer.wait((e) => status(200)(e) && e.msg?.callId === 'refresh-bug' && e.msg.cseq.method === 'BYE');
      await new Promise((r) => setImmediate(r));
      assert.deepEqual(unhandled, []);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('answers an out-of-order CSeq inside a dialog with 500 (sec. 12.2.2)', async () => {
    peer.send(port, request(peer, 'INVITE', { callId: 'order', cseq: '10 INVITE', body: 'v=0\r\n' }));
    const ok = (await peer.wait((e) => status(200)(e) && e.msg?.callId === 'order')).msg as SipResponse;
    const tag = ok.to.tag as string;
    peer.send(port, request(peer, 'ACK', { callId: 'order', toTag: tag, cseq: '10 ACK' }));
    peer.send(port, request(peer, 'INFO', { callId: 'order', toTag: tag, cseq: '5 INFO' }));
    await peer.wait((e) => status(500)(e) && e.msg?.callId === 'order');
    peer.send(port, request(peer, 'BYE', { callId: 'order', toTag: tag, cseq: '11 BYE' }));
    await peer.wait((e) => status(200)(e) && e.msg?.callId === 'order' && e.msg.cseq.method === 'BYE');
  });

  it('answers UPDATE inside a dialog with 200, the SDP answer and Contact (RFC 3311)', async () => {
    peer.send(port, request(peer, 'INVITE', { callId: 'upd', body: 'v=0\r\n' }));
    const ok = (await peer.wait((e) => status(200)(e) && e.msg?.callId === 'upd')).msg as SipResponse;
    const tag = ok.to.tag as string;
    peer.send(port, request(peer, 'ACK', { callId: 'upd', toTag: tag, cseq: '1 ACK' }));
    peer.send(port, request(peer, 'UPDATE', { callId: 'upd', toTag: tag, cseq: '2 UPDATE', body: 'v=0\r\n' }));
    const res = (await peer.wait((e) => status(200)(e) && e.msg?.cseq.method === 'UPDATE')).msg as SipResponse;
    assert.equal(res.body.toString(), 'v=0\r\n');
    assert.match(res.headers.get('contact') ?? '', /^<sip:gateway@127\.0\.0\.1:\d+>$/);
    peer.send(port, request(peer, 'BYE', { callId: 'upd', toTag: tag, cseq: '3 BYE' }));
    await peer.wait((e) => status(200)(e) && e.msg?.callId === 'upd' && e.msg.cseq.method === 'BYE');
  });

  it('sends its BYE along the route set to the remote target (RFC 3261 sec. 12.2.1.1)', async () => {
    const proxy = await Peer.open();
    try {
      const rr = `Record-Route: <sip:127.0.0.1:${proxy.port};lr>\n`;
      peer.send(port, request(peer, 'INVITE', { callId: 'routed', body: 'v=0\r\n', extra: rr }));
      const ok = (await peer.wait((e) => status(200)(e) && e.msg?.callId === 'routed')).msg as SipResponse;
      assert.equal(ok.headers.get('record-route'), `<sip:127.0.0.1:${proxy.port};lr>`, 'the 2xx copies Record-Route (sec. 12.1.1)');
      peer.send(port, request(peer, 'ACK', { callId: 'routed', toTag: ok.to.tag as string, cseq: '1 ACK' }));
      const dialog = dialogs.find((d) => d.callId === 'routed') as Dialog;
      await new Promise((r) => setTimeout(r, 50));
      void dialog.bye();
      const bye = (await proxy.wait((e) => e.text.startsWith('BYE '))).msg as SipRequest;
      assert.equal(bye.uri, `sip:peer@127.0.0.1:${peer.port}`, 'Request-URI is the remote target');
      assert.equal(bye.headers.get('route'), `<sip:127.0.0.1:${proxy.port};lr>`);
      assert.equal(bye.to.tag, 'peer1');
      assert.equal(bye.from.tag, dialog.localTag);
      assert.equal(bye.cseq.seq, dialog.localSeq);
      assert.equal(peer.got.filter((e) => e.text.startsWith('BYE ')).length, 0, 'nothing bypasses the route');
    } finally {
      proxy.close();
    }
  });

  it('sends to a URI host only when it is an IP literal over a transport we run; else back over the known flow', () => {
    const known = transports.flowTo('UDP', { address: '127.0.0.1', port: peer.port });
    // 1270.0.0.1 and 027.0.0.1 are no addresses (dgram would hand them to DNS, or read 027 as octal).
    for (const host of ['1270.0.0.1', '027.0.0.1', '127.1']) {
      assert.deepEqual(stack.flowFor(`sip:a@${host}:5999`, known).remote, known.remote, host);
    }
    assert.deepEqual(stack.flowFor('sip:a@127.0.0.5:5999', known).remote, { address: '127.0.0.5', port: 5999 });
    // A transport we do not run (found by the fuzz bench: a mangled `transport=udp` left BYEs unsent).
    assert.deepEqual(stack.flowFor('sip:a@127.0.0.5:5999;transport=sctp', known).remote, known.remote);
  });

  it('ends a request at once with 503 when its TCP connection is refused (sec. 17.1.4), not at Timer F', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const closedPort = (closed.address() as { port: number }).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const flow = stack.flowFor(`sip:127.0.0.1:${closedPort};transport=tcp`);
    const req = new SipRequest('OPTIONS', `sip:127.0.0.1:${closedPort}`, new Headers([
      ['Via', stack.viaFor(flow, 'z9hG4bKrefused')], ['Max-Forwards', '70'], ['From', '<sip:gateway@127.0.0.1>;tag=r1'],
      ['To', `<sip:127.0.0.1:${closedPort}>`], ['Call-ID', 'refused-tcp'], ['CSeq', '1 OPTIONS'],
    ]));
    const started = Date.now();
    const res = await stack.request(req, flow);
    // Timer F is 64*T1 = 3.2 s here: a 408 would mean the refusal went unheard.
    assert.equal(res.status, 503);
    assert.ok(Date.now() - started < 3000, `answered after ${Date.now() - started} ms`);
  });
});
