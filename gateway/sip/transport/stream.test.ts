import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { SipRequest } from '../message/message.js';
import { Headers } from '../message/headers.js';
import { StreamTransport } from './stream.js';
import type { TransportEvent } from './types.js';

const OPTIONS = (branch: string, extraVia = ''): string =>
  `OPTIONS sip:x@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/TCP 127.0.0.1:5099;branch=${branch}${extraVia}\r\nFrom: <sip:a@b>;tag=1\r\nTo: <sip:x@127.0.0.1>\r\n` +
  `Call-ID: ${branch}\r\nCSeq: 1 OPTIONS\r\nContent-Length: 0\r\n\r\n`;

async function client(port: number): Promise<{ socket: Socket; data: () => string; closed: Promise<void> }> {
  const socket = connect({ host: '127.0.0.1', port });
  await new Promise<void>((r) => socket.once('connect', r));
  let text = '';
  socket.on('data', (d: Buffer) => (text += d.toString()));
  const closed = new Promise<void>((r) => socket.once('close', () => r()));
  return { socket, data: () => text, closed };
}

const until = async (cond: () => boolean, ms = 2000): Promise<void> => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe('TCP transport (RFC 3261 sec. 18.3)', function () {
  this.timeout(10_000);
  let transport: StreamTransport;
  const events: TransportEvent[] = [];

  before(async () => {
    transport = await StreamTransport.listen({ host: '127.0.0.1', port: 0, idleTimeoutMs: 300, framer: { maxHeaderBytes: 2048 } }, (e) => events.push(e));
  });
  after(async () => {
    await transport.close();
  });
  beforeEach(() => {
    events.length = 0;
  });

  it('frames messages split across and packed into segments', async () => {
    const c = await client(transport.local.port);
    const two = OPTIONS('z9hG4bKa1') + OPTIONS('z9hG4bKa2');
    for (let i = 0; i < two.length; i += 7) c.socket.write(two.slice(i, i + 7));
    await until(() => events.length === 2);
    assert.deepEqual(events.map((e) => e.kind === 'message' && e.message.callId), ['z9hG4bKa1', 'z9hG4bKa2']);
    c.socket.destroy();
  });

  it('answers a CRLFCRLF keep-alive with CRLF (RFC 5626 sec. 4.4.1)', async () => {
    const c = await client(transport.local.port);
    c.socket.write('\r\n\r\n');
    await until(() => c.data() === '\r\n');
    c.socket.destroy();
  });

  it('closes the connection when framing is lost (head over the limit), after reporting it', async () => {
    const c = await client(transport.local.port);
    c.socket.write(`OPTIONS sip:x@127.0.0.1 SIP/2.0\r\nX-Pad: ${'a'.repeat(4000)}\r\n`);
    await c.closed;
    assert.ok(events.some((e) => e.kind === 'invalid' && e.error.fatal));
  });

  it('closes idle connections', async () => {
    const c = await client(transport.local.port);
    const started = Date.now();
    await c.closed;
    assert.ok(Date.now() - started >= 250);
  });

  it('sends responses and new requests on the connection the peer opened, and by its Via alias (RFC 5923)', async () => {
    const c = await client(transport.local.port);
    c.socket.write(OPTIONS('z9hG4bKa3', ';alias'));
    await until(() => events.length === 1);
    const first = events[0];
    assert.ok(first?.kind === 'message');
    const reused = transport.flowTo({ address: '127.0.0.1', port: 5099 });
    assert.equal(reused, first.flow, 'the alias names the same connection');
    const h = new Headers([['Via', 'SIP/2.0/TCP 127.0.0.1;branch=z9hG4bKb1'], ['From', '<sip:gw@x>;tag=2'], ['To', '<sip:a@b>'], ['Call-ID', 'back'], ['CSeq', '1 OPTIONS']]);
    reused.send(new SipRequest('OPTIONS', 'sip:a@127.0.0.1', h));
    await until(() => c.data().startsWith('OPTIONS sip:a@127.0.0.1 SIP/2.0'));
    assert.equal(transport.connectionCount, 1);
    c.socket.destroy();
  });
});
