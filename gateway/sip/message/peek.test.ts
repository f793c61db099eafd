import assert from 'node:assert/strict';
import type { SipResponse } from './message.js';
import { parseDatagram } from './parser.js';
import { PeekedHead, peekedResponse } from './peek.js';

const wire = (text: string): Buffer => Buffer.from(text.replace(/\r?\n/g, '\r\n'));

const invite = (via: string, to = '<sip:+914440000001@127.0.0.1>'): Buffer =>
  wire(
    `INVITE sip:+914440000001@127.0.0.1 SIP/2.0\nVia: ${via}\nVia: SIP/2.0/UDP 10.0.0.1:5070;branch=z9hG4bK-proxy\n` +
      `From: "Caller, \u00e9" <sip:caller@127.0.0.1>;tag=ft1\nTo: ${to}\nCall-ID: flood-1@127.0.0.1\nCSeq: 7 INVITE\n` +
      'Max-Forwards: 70\nContent-Type: application/sdp\nContent-Length: 4\n\nv=0\n',
  );
const source = { address: '127.0.0.1', port: 36000 };
const retry: ReadonlyArray<readonly [string, string]> = [['Retry-After', '5']];

describe('PeekedHead: a look at a datagram before parsing', () => {
  it('reads the method, header values by long or compact name, and folded lines', () => {
    const h = PeekedHead.of(wire('\r\nOPTIONS sip:a@b SIP/2.0\nv: SIP/2.0/UDP h;branch=z9hG4bK1\nt: <sip:a@b>;tag=x9\ni: abc\nUser-Agent: sipsak\n  0.9.8.1\n\n'));
    assert.ok(h);
    assert.equal(h.method, 'OPTIONS');
    assert.equal(h.isResponse, false);
    assert.equal(h.header('call-id'), 'abc');
    assert.equal(h.header('user-agent'), 'sipsak 0.9.8.1');
    assert.deepEqual(h.headerAll('via'), ['SIP/2.0/UDP h;branch=z9hG4bK1']);
    assert.equal(h.toTag, 'x9');
  });

  it('finds the To tag only outside the URI brackets, or in the addr-spec form', () => {
    const tagOf = (to: string): string | undefined => PeekedHead.of(invite('SIP/2.0/UDP 127.0.0.1;branch=z9hG4bK1', to))?.toTag;
    assert.equal(tagOf('<sip:a@b;tag=inside>'), undefined);
    assert.equal(tagOf('"x>y" <sip:a@b;tag=inside> ; TAG = out'), 'out');
    assert.equal(tagOf('sip:a@b;tag=spec'), 'spec');
  });

  it('tells responses apart and refuses to guess at garbage', () => {
    assert.equal(PeekedHead.of(wire('SIP/2.0 200 OK\nCSeq: 1 INVITE\n\n'))?.isResponse, true);
    assert.equal(PeekedHead.of(wire('\u0000\u0001 garbage\n\n')), undefined);
    // No empty line: the datagram is all head, as parseDatagram reads it (RFC 4475's baddn.dat).
    assert.equal(PeekedHead.of(Buffer.from('INVITE sip:a@b SIP/2.0\r\nVia: x'))?.header('via'), 'x', 'a datagram without an empty line');
  });
});

describe('peekedResponse: a stateless answer from the raw header lines (RFC 3261 sec. 8.2.6.2)', () => {
  it('copies Via, From, To, Call-ID and CSeq, adds a To tag and the extra headers, and parses back', () => {
    const head = PeekedHead.of(invite('SIP/2.0/UDP 127.0.0.1:36000;branch=z9hG4bK-a;rport')) as PeekedHead;
    const res = peekedResponse(head, source, '503 Service Unavailable', 'rfTAG', retry);
    assert.ok(res);
    assert.equal(res.port, 36000);
    const msg = parseDatagram(res.wire) as SipResponse;
    assert.equal(msg.status, 503);
    assert.equal(msg.reason, 'Service Unavailable');
    assert.deepEqual(msg.headers.getAll('via'), ['SIP/2.0/UDP 127.0.0.1:36000;branch=z9hG4bK-a;rport=36000;received=127.0.0.1', 'SIP/2.0/UDP 10.0.0.1:5070;branch=z9hG4bK-proxy']);
    assert.equal(msg.from.tag, 'ft1');
    assert.equal(msg.to.tag, 'rfTAG');
    assert.equal(msg.callId, 'flood-1@127.0.0.1');
    assert.equal(msg.headers.get('cseq'), '7 INVITE');
    assert.equal(msg.headers.get('retry-after'), '5');
    assert.equal(msg.body.length, 0);
    assert.ok(res.wire.includes(Buffer.from('"Caller, \u00e9"', 'utf8')), 'octets outside ASCII go back unchanged');
  });

  it('answers at the sent-by port without rport (5060 by default), always at the source address (sec. 18.2.2)', () => {
    const port = (via: string): number | undefined => peekedResponse(PeekedHead.of(invite(via)) as PeekedHead, source, '503 Service Unavailable', 'rf1', retry)?.port;
    assert.equal(port('SIP/2.0/UDP 192.0.2.7:5072;branch=z9hG4bK-b'), 5072);
    assert.equal(port('SIP/2.0/UDP 192.0.2.7;branch=z9hG4bK-b'), 5060);
    assert.equal(port('SIP/2.0/UDP [2001:db8::1]:5080;branch=z9hG4bK-b;rport'), 36000);
  });

  it('keeps a To tag the request already had, and gives up without Call-ID or with a broken top Via', () => {
    const tagged = PeekedHead.of(invite('SIP/2.0/UDP 127.0.0.1;branch=z9hG4bK-c', '<sip:a@b>;tag=theirs')) as PeekedHead;
    assert.equal((parseDatagram((peekedResponse(tagged, source, '503 Service Unavailable', 'rf1', retry) as { wire: Buffer }).wire) as SipResponse).to.tag, 'theirs');
    const noCallId = PeekedHead.of(wire('OPTIONS sip:a@b SIP/2.0\nVia: SIP/2.0/UDP h;branch=z9hG4bK1\nFrom: <sip:x@y>;tag=1\nTo: <sip:a@b>\nCSeq: 1 OPTIONS\n\n')) as PeekedHead;
    assert.equal(peekedResponse(noCallId, source, '503 Service Unavailable', 'rf1', retry), undefined);
    assert.equal(peekedResponse(PeekedHead.of(invite('garbage here')) as PeekedHead, source, '503 Service Unavailable', 'rf1', retry), undefined);
  });
});
