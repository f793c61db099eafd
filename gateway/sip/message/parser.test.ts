import assert from 'node:assert/strict';
import {
  Headers,
  SipParseError,
  SipRequest,
  createErrorResponse,
  createResponse,
  isRequest,
  parseDatagram,
  responseTarget,
  serialize,
  stampReceived,
  type SipMessage,
} from './index.js';

const crlf = (lines: string[]): Buffer => Buffer.from(lines.join('\r\n'), 'utf8');

const invite = (extra: string[] = [], body = ''): Buffer =>
  crlf([
    'INVITE sip:+15551234567@gw.example.com;user=phone SIP/2.0',
    'Via: SIP/2.0/UDP 192.0.2.10:5060;branch=z9hG4bK776asdhds;rport',
    'Max-Forwards: 70',
    'To: Bob <sip:bob@example.com>',
    'From: "Alice \\"A\\"" <sip:alice@example.com>;tag=1928301774',
    'Call-ID: a84b4c76e66710@pc33.example.com',
    'CSeq: 314159 INVITE',
    'Contact: <sip:alice@192.0.2.10>',
    ...extra,
    `Content-Length: ${Buffer.byteLength(body)}`,
    '',
    body,
  ]);

const edit = (buf: Buffer, from: string, to: string): Buffer => Buffer.from(buf.toString('utf8').replace(from, to), 'utf8');

function parseRequest(buf: Buffer): SipRequest {
  const m = parseDatagram(buf);
  assert.ok(isRequest(m));
  return m;
}

function parseError(buf: Buffer): SipParseError {
  try {
    parseDatagram(buf);
  } catch (e) {
    assert.ok(e instanceof SipParseError, `expected SipParseError, got ${String(e)}`);
    return e;
  }
  assert.fail('message was accepted');
}

describe('SIP message parsing (RFC 3261 sec. 7)', () => {
  it('reads the request line and the eagerly parsed fields', () => {
    const req = parseRequest(invite());
    assert.equal(req.method, 'INVITE');
    assert.equal(req.uri, 'sip:+15551234567@gw.example.com;user=phone');
    assert.equal(req.callId, 'a84b4c76e66710@pc33.example.com');
    assert.deepEqual(req.cseq, { seq: 314159, method: 'INVITE' });
    assert.equal(req.maxForwards, 70);
    assert.equal(req.from.displayName, 'Alice "A"');
    assert.equal(req.from.tag, '1928301774');
    assert.equal(req.to.displayName, 'Bob');
    assert.equal(req.to.tag, undefined);
    const via = req.topVia;
    assert.equal(via.transport, 'UDP');
    assert.equal(via.host, '192.0.2.10');
    assert.equal(via.port, 5060);
    assert.equal(via.branch, 'z9hG4bK776asdhds');
    assert.equal(via.rport, true);
  });

  it('maps compact forms and any letter case to the same header', () => {
    const req = parseRequest(
      crlf([
        'OPTIONS sip:a@example.com SIP/2.0',
        'v: SIP/2.0/TCP h.example.com;branch=z9hG4bK1',
        'f: <sip:x@example.com>;tag=1',
        't: sip:a@example.com',
        'i: c1',
        'CSEQ: 1 OPTIONS',
        'k: timer, 100rel',
        'c: text/plain',
        'l: 2',
        '',
        'hi',
      ]),
    );
    assert.equal(req.headers.get('Call-ID'), 'c1');
    assert.equal(req.headers.get('call-id'), 'c1');
    assert.equal(req.headers.get('i'), 'c1');
    assert.deepEqual(req.headers.values('Supported'), ['timer', '100rel']);
    assert.equal(req.contentType, 'text/plain');
    assert.equal(req.body.toString(), 'hi');
    const out = serialize(req).toString();
    assert.match(out, /\r\nVia: SIP\/2.0\/TCP/);
    assert.match(out, /\r\nCall-ID: c1\r\n/);
    assert.match(out, /\r\nCSeq: 1 OPTIONS\r\n/);
    assert.match(out, /\r\nSupported: timer, 100rel\r\n/);
  });

  it('unfolds continuation lines into single spaces', () => {
    const req = parseRequest(invite(['Subject: first', '  second', '\tthird']));
    assert.equal(req.headers.get('subject'), 'first second third');
  });

  it('splits list headers on commas outside quotes and angle brackets', () => {
    const req = parseRequest(
      invite(['Route: <sip:p1.example.com;lr>, "Proxy, Two" <sip:p2.example.com;lr>', 'Route: <sip:p3.example.com;lr>']),
    );
    assert.deepEqual(
      req.routes.map((r) => r.uriText),
      ['sip:p1.example.com;lr', 'sip:p2.example.com;lr', 'sip:p3.example.com;lr'],
    );
    assert.equal(req.routes[1]?.displayName, 'Proxy, Two');
    // A non-list header keeps its commas.
    const dated = parseRequest(invite(['Date: Sat, 13 Nov 2010 23:29:00 GMT']));
    assert.deepEqual(dated.headers.values('date'), ['Sat, 13 Nov 2010 23:29:00 GMT']);
  });

  it('parses Via parameters: received, rport with value, maddr, ttl and IPv6 sent-by', () => {
    const req = parseRequest(
      edit(
        invite(),
        'Via: SIP/2.0/UDP 192.0.2.10:5060;branch=z9hG4bK776asdhds;rport',
        'Via: SIP/2.0/udp [2001:db8::9]:5070;branch=z9hG4bKx;received=198.51.100.1;rport=40000;maddr=224.0.1.75;ttl=16',
      ),
    );
    const v = req.topVia;
    assert.equal(v.transport, 'UDP');
    assert.equal(v.host, '[2001:db8::9]');
    assert.equal(v.port, 5070);
    assert.equal(v.received, '198.51.100.1');
    assert.equal(v.rport, 40000);
    assert.equal(v.maddr, '224.0.1.75');
    assert.equal(v.ttl, 16);
  });

  it('writes Content-Length from the body octets, whatever the input said', () => {
    const req = parseRequest(invite([], 'v=0\r\ns=ü\r\n'));
    req.body = Buffer.from('héllo', 'utf8');
    const out = serialize(req);
    const text = out.toString('utf8');
    assert.match(text, /\r\nContent-Length: 6\r\n\r\nhéllo$/);
    assert.equal(text.match(/Content-Length/g)?.length, 1);
    const again = parseDatagram(out);
    assert.equal(again.body.toString('utf8'), 'héllo');
  });

  it('re-parses its own output to an equal message', () => {
    const req = parseRequest(invite(['Record-Route: <sip:p1.example.com;lr>'], 'v=0\r\n'));
    const again = parseRequest(serialize(req));
    assert.equal(again.uri, req.uri);
    assert.deepEqual([...again.headers.lines()].map(([k, , v]) => [k, v]), [...req.headers.lines()].map(([k, , v]) => [k, v]));
    assert.deepEqual(again.body, req.body);
  });

  it('sees header changes in the parsed views', () => {
    const req = parseRequest(invite());
    assert.equal(req.via.length, 1);
    req.headers.prepend('Via', 'SIP/2.0/TCP proxy.example.com;branch=z9hG4bKp1');
    assert.equal(req.via.length, 2);
    assert.equal(req.topVia.host, 'proxy.example.com');
  });
});

describe('datagram framing (RFC 3261 sec. 18.3)', () => {
  it('takes the rest of the datagram as body when Content-Length is absent', () => {
    const buf = edit(invite([], 'abc'), 'Content-Length: 3\r\n', '');
    assert.equal(parseDatagram(buf).body.toString(), 'abc');
  });

  it('ignores octets beyond Content-Length', () => {
    const buf = Buffer.concat([invite([], 'abc'), Buffer.from('garbage')]);
    assert.equal(parseDatagram(buf).body.toString(), 'abc');
  });

  it('rejects a Content-Length larger than the datagram, answerably', () => {
    const buf = edit(invite([], 'abc'), 'Content-Length: 3', 'Content-Length: 30');
    const err = parseError(buf);
    assert.equal(err.status, 400);
    assert.ok(err.canRespond);
  });

  it('tolerates bare-LF line ends', () => {
    const m = parseDatagram(Buffer.from(invite([], 'v=0\n').toString().replace(/\r\n/g, '\n')));
    assert.equal(m.callId, 'a84b4c76e66710@pc33.example.com');
    assert.equal(m.body.toString(), 'v=0\n');
  });

  it('ignores CRLFs before the start line (RFC 3261 sec. 7.5)', () => {
    const m = parseDatagram(Buffer.concat([Buffer.from('\r\n\r\n'), invite()]));
    assert.ok(isRequest(m));
  });
});

describe('responses built from requests (RFC 3261 sec. 8.2.6)', () => {
  it('copies Via, From, To, Call-ID and CSeq and adds a To tag', () => {
    const req = parseRequest(
      invite(['Via: SIP/2.0/UDP second.example.com;branch=z9hG4bK2', 'Timestamp: 54']),
    );
    const res = createResponse(req, 486, undefined, { toTag: 'abc' });
    assert.equal(res.reason, 'Busy Here');
    assert.deepEqual(res.headers.getAll('via'), req.headers.getAll('via'));
    assert.equal(res.headers.get('from'), req.headers.get('from'));
    assert.equal(res.to.tag, 'abc');
    assert.equal(res.callId, req.callId);
    assert.deepEqual(res.cseq, req.cseq);
    assert.equal(res.headers.get('timestamp'), undefined);
    const trying = createResponse(req, 100);
    assert.equal(trying.to.tag, undefined);
    assert.equal(trying.headers.get('timestamp'), '54');
    const m: SipMessage = parseDatagram(serialize(res));
    assert.equal(m.isRequest, false);
  });

  it('keeps an existing To tag', () => {
    const req = new SipRequest('BYE', 'sip:a@example.com', new Headers([
      ['Via', 'SIP/2.0/UDP h;branch=z9hG4bK3'],
      ['From', '<sip:b@example.com>;tag=1'],
      ['To', '<sip:a@example.com>;tag=2'],
      ['Call-ID', 'x'],
      ['CSeq', '2 BYE'],
    ]));
    assert.equal(createResponse(req, 200).to.tag, '2');
  });

  it('answers a malformed request with 400 built from what could be read', () => {
    const err = parseError(edit(invite(), 'CSeq: 314159 INVITE', 'CSeq: 314159 BYE'));
    const res = createErrorResponse(err, { toTag: 't1' });
    assert.ok(res);
    assert.equal(res.status, 400);
    assert.equal(res.headers.get('cseq'), '314159 BYE');
    assert.equal(res.to.tag, 't1');
    assert.equal(res.topVia.branch, 'z9hG4bK776asdhds');
  });

  it('never answers a response or an ACK', () => {
    const ack = invite().toString().replace(/INVITE/g, 'ACK').replace('Content-Length: 0', 'Content-Length: 9');
    const err = parseError(Buffer.from(ack));
    assert.equal(createErrorResponse(err), undefined);
    const badResponse = parseError(Buffer.from('SIP/2.0 999 Nope\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK1\r\n\r\n'));
    assert.equal(badResponse.canRespond, false);
  });
});

describe('Via handling by transports (RFC 3261 sec. 18.2.1/18.2.2, RFC 3581)', () => {
  it('stamps received and rport on the top Via only and routes the response there', () => {
    const req = parseRequest(invite(['Via: SIP/2.0/UDP second.example.com;branch=z9hG4bK2']));
    stampReceived(req.headers, '203.0.113.9', 40123);
    assert.equal(req.topVia.received, '203.0.113.9');
    assert.equal(req.topVia.rport, 40123);
    assert.equal(req.topVia.branch, 'z9hG4bK776asdhds');
    assert.equal(req.via[1]?.received, undefined);
    assert.deepEqual(responseTarget(req.topVia), { transport: 'UDP', host: '203.0.113.9', port: 40123 });
    // The stamped Via is what the response copies (RFC 3261 sec. 8.2.6.2).
    assert.equal(createResponse(req, 200).topVia.rport, 40123);
  });

  it('adds received without rport only when sent-by differs from the source', () => {
    const req = parseRequest(edit(invite(), ';rport', ''));
    stampReceived(req.headers, '192.0.2.10', 5060);
    assert.equal(req.topVia.received, undefined);
    stampReceived(req.headers, '198.51.100.3', 5060);
    assert.equal(req.topVia.received, '198.51.100.3');
    assert.deepEqual(responseTarget(req.topVia), { transport: 'UDP', host: '198.51.100.3', port: 5060 });
  });

  it('stamps the parsed view exactly as re-parsing the stamped headers would, keeping From/To/CSeq', () => {
    const cases: Array<[string[], string, number]> = [
      [['Via: SIP/2.0/UDP second.example.com;branch=z9hG4bK2'], '203.0.113.9', 40123],
      [[], '192.0.2.10', 5060],
      [['Via: SIP/2.0/TCP [2001:db8::9]:5070;branch=z9hG4bK3;received=192.0.2.1'], '2001:db8::7', 5080],
    ];
    for (const [extra, ip, port] of cases) {
      for (const source of [invite(extra), edit(invite(extra), ';rport', ''), edit(invite(extra), 'z9hG4bK776asdhds;rport', 'z9hG4bK776asdhds;rport, SIP/2.0/UDP third.example.com;branch=z9hG4bK4')]) {
        const fast = parseRequest(source);
        const from = fast.from;
        fast.stampReceived(ip, port);
        const slow = parseRequest(source);
        stampReceived(slow.headers, ip, port);
        assert.deepEqual(fast.headers.getAll('via'), slow.headers.getAll('via'));
        assert.deepEqual(fast.via, slow.via);
        assert.equal(fast.from, from);
        // Requests come with their From/To URIs already checked, so compare the views, not caches.
        assert.equal(String(fast.to), String(slow.to));
        assert.deepEqual(fast.to.uri, slow.to.uri);
        assert.deepEqual(fast.cseq, slow.cseq);
      }
    }
  });

  it('sends to maddr when present and uses 5061 by default for TLS', () => {
    const viaOf = (v: string) => parseRequest(edit(invite(), 'Via: SIP/2.0/UDP 192.0.2.10:5060;branch=z9hG4bK776asdhds;rport', `Via: ${v}`)).topVia;
    assert.deepEqual(responseTarget(viaOf('SIP/2.0/UDP h.example.com;branch=z9hG4bK1;maddr=239.1.1.1')), {
      transport: 'UDP',
      host: '239.1.1.1',
      port: 5060,
    });
    assert.deepEqual(responseTarget(viaOf('SIP/2.0/TLS h.example.com;branch=z9hG4bK1')), { transport: 'TLS', host: 'h.example.com', port: 5061 });
  });
});

describe('request headers validated up front (RFC 3261 sec. 8.2)', () => {
  const fault = (buf: Buffer): [string | undefined, boolean] => {
    const e = parseError(buf);
    return [e.header, e.missing];
  };

  it('names the header at fault, including values that used to be parsed on first use', () => {
    assert.deepEqual(fault(edit(invite(), 'To: Bob <sip:bob@example.com>', 'To: <sip:+914440009999@127.0.0.">')), ['To', false]);
    assert.deepEqual(fault(edit(invite(), 'Contact: <sip:alice@192.0.2.10>', 'Contact: <sip:alice@192.0.2.10:70000>')), ['Contact', false]);
    assert.deepEqual(fault(invite(['Content-Type: application'])), ['Content-Type', false]);
    assert.deepEqual(fault(invite(['Session-Expires: 1800', 'Session-Expires: 90'])), ['Session-Expires', false]);
    assert.deepEqual(fault(invite(['Min-SE: soon'])), ['Min-SE', false]);
    assert.deepEqual(fault(invite(['Record-Route: <sip:p.example.com;lr'])), ['Record-Route', false]);
    assert.deepEqual(fault(edit(invite(), 'Contact: <sip:alice@192.0.2.10>\r\n', '')), ['Contact', true]);
    assert.deepEqual(fault(edit(invite(), 'CSeq: 314159 INVITE', 'CSeq: 314159 BYE')), ['CSeq', false]);
  });

  it('leaves alone what this UA never reads, and the ACK, which is never answered', () => {
    const ack = edit(edit(invite(), 'INVITE sip:', 'ACK sip:'), 'CSeq: 314159 INVITE', 'CSeq: 314159 ACK');
    parseRequest(edit(ack, 'To: Bob <sip:bob@example.com>', 'To: <sip:bob@exa"mple.com>'));
    const options = edit(edit(invite(), 'INVITE sip:', 'OPTIONS sip:'), 'CSeq: 314159 INVITE', 'CSeq: 314159 OPTIONS');
    parseRequest(edit(options, 'Contact: <sip:alice@192.0.2.10>', 'Contact: sip:alice@192.0.2.10?Route=x'));
    parseRequest(edit(invite(['Date: yesterday', 'Subject: <<>>']), '', ''));
  });

  it('accepts an INVITE without Contact from an RFC 2543 UAC (no magic cookie) or inside a dialog', () => {
    const noContact = edit(invite(), 'Contact: <sip:alice@192.0.2.10>\r\n', '');
    parseRequest(edit(noContact, 'branch=z9hG4bK776asdhds', 'branch=776asdhds'));
    parseRequest(edit(noContact, 'To: Bob <sip:bob@example.com>', 'To: Bob <sip:bob@example.com>;tag=b1'));
  });
});
