import assert from 'node:assert/strict';
import { SipParseError, StreamFramer, isRequest, type FramedItem } from './index.js';

const msg = (callId: string, body = '', cl: string | null = String(Buffer.byteLength(body))): string =>
  [
    'OPTIONS sip:a@example.com SIP/2.0',
    'Via: SIP/2.0/TCP h.example.com;branch=z9hG4bK1',
    'From: <sip:b@example.com>;tag=1',
    'To: <sip:a@example.com>',
    `Call-ID: ${callId}`,
    'CSeq: 1 OPTIONS',
    ...(cl === null ? [] : [`Content-Length: ${cl}`]),
    '',
    body,
  ].join('\r\n');

const callIds = (items: FramedItem[]): string[] =>
  items.flatMap((i) => (i.kind === 'message' ? [i.message.callId] : []));

describe('stream framing (RFC 3261 sec. 18.3)', () => {
  it('frames back-to-back messages and messages split at any byte', () => {
    const wire = Buffer.from(msg('one', 'hello') + msg('two') + msg('three', 'xyz'));
    const whole = new StreamFramer().push(wire);
    assert.deepEqual(callIds(whole), ['one', 'two', 'three']);
    for (const size of [1, 2, 7, 64]) {
      const framer = new StreamFramer();
      const got: FramedItem[] = [];
      for (let i = 0; i < wire.length; i += size) got.push(...framer.push(wire.subarray(i, i + size)));
      assert.deepEqual(callIds(got), ['one', 'two', 'three'], `chunk size ${size}`);
      assert.equal(framer.buffered, 0);
    }
  });

  it('reports double-CRLF keep-alive pings and skips lone CRLFs (RFC 5626 sec. 4.4.1)', () => {
    const framer = new StreamFramer();
    assert.deepEqual(framer.push(Buffer.from('\r\n\r\n')), [{ kind: 'ping' }]);
    const items = framer.push(Buffer.from(`\r\n${msg('after-pong')}`));
    assert.deepEqual(callIds(items), ['after-pong']);
  });

  it('closes the stream when Content-Length is missing or negative', () => {
    assert.throws(() => new StreamFramer().push(Buffer.from(msg('x', '', null))), (e: SipParseError) => e.fatal);
    assert.throws(() => new StreamFramer().push(Buffer.from(msg('x', '', '-999'))), (e: SipParseError) => e.fatal);
  });

  it('bounds the head and the body a peer can make it hold', () => {
    const framer = new StreamFramer({ maxHeaderBytes: 1024, maxBodyBytes: 100 });
    assert.throws(() => framer.push(Buffer.from(`OPTIONS sip:a@b SIP/2.0\r\nX: ${'a'.repeat(2000)}`)), (e: SipParseError) => e.fatal);
    assert.throws(() => new StreamFramer({ maxBodyBytes: 100 }).push(Buffer.from(msg('big', '', '5000'))), (e: SipParseError) => e.fatal);
  });

  it('stays linear when a large message trickles in byte by byte', () => {
    const body = 'x'.repeat(200_000);
    const wire = Buffer.from(msg('slow', body));
    const framer = new StreamFramer();
    const started = Date.now();
    const items: FramedItem[] = [];
    for (let i = 0; i < wire.length; i++) items.push(...framer.push(wire.subarray(i, i + 1)));
    assert.deepEqual(callIds(items), ['slow']);
    assert.ok(Date.now() - started < 3000, `took ${Date.now() - started} ms`);
  });

  it('keeps the stream after a well-framed but malformed message', () => {
    const bad = msg('bad').replace('CSeq: 1 OPTIONS', 'CSeq: 1 INVITE');
    const items = new StreamFramer().push(Buffer.from(bad + msg('good')));
    assert.equal(items[0]?.kind, 'invalid');
    assert.ok(items[0]?.kind === 'invalid' && items[0].error.canRespond);
    assert.ok(items[1]?.kind === 'message' && isRequest(items[1].message));
  });
});
