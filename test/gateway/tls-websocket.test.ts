import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { WebSocket } from 'ws';
import { loadOrCreateTlsCredentials } from '../../gateway/sip/transport/certificate.js';
import { numbers, startGatewayFixture, type GatewayFixture } from './gateway-harness.js';
import { NodeUac } from './node-uac.js';

/** SIP over TLS (RFC 3261 sec. 26.2) and WebSocket (RFC 7118), which SIPp cannot speak, with Node clients. */
describe('gateway: TLS and WebSocket transports', function () {
  this.timeout(30_000);
  let fx: GatewayFixture;
  let dataDir: string;
  let cert: Buffer;

  before(async function () {
    dataDir = mkdtempSync(path.join(tmpdir(), 'gw-tls-'));
    const creds = await loadOrCreateTlsCredentials({ dataDir });
    assert.equal(creds.source, 'generated');
    assert.equal((await loadOrCreateTlsCredentials({ dataDir })).source, 'reused');
    cert = creds.cert;
    fx = await startGatewayFixture({
      transports: { host: '127.0.0.1', port: 0, tcpPort: 0, tlsPort: 0, wsPort: 0, tls: { cert: creds.cert, key: creds.key } },
      trustedSources: ['127.0.0.1'],
    });
  });
  after(async () => {
    await fx?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** OPTIONS, then a whole call: INVITE -> 180/200 (with our Contact) on the same connection, ACK, BYE -> 200. */
  async function call(uac: NodeUac, scheme: 'sips' | 'sip'): Promise<void> {
    const uri = `${scheme}:${numbers.trunkDid}@127.0.0.1`;
    uac.request('OPTIONS', uri, 1);
    const options = await uac.response('OPTIONS', 200);
    assert.match(options.headers.get('allow') ?? '', /INVITE/);
    const before = fx.handler.calls.length;
    uac.request('INVITE', uri, 2, { body: await uac.offer() });
    await uac.response('INVITE', 180);
    const ok = await uac.response('INVITE', 200);
    assert.match(ok.body.toString(), /m=audio \d+ RTP\/AVP 0/);
    const contact = ok.headers.get('contact') ?? '';
    const port = uac.transport === 'TLS' ? fx.gateway.ports.TLS : fx.gateway.ports.WS;
    // RFC 3261 sec. 8.1.1.8, 12.1.1: SIPS only for a SIPS request; a sip: request over TLS gets
    // sip:...;transport=tls (RFC 5630 sec. 3.1.3), which baresip 1.0 needs to send its ACK.
    const expected = uac.transport === 'WS' ? `<sip:gateway@127.0.0.1:${port};transport=ws>`
      : scheme === 'sips' ? `<sips:gateway@127.0.0.1:${port};transport=tcp>` : `<sip:gateway@127.0.0.1:${port};transport=tls>`;
    assert.equal(contact, expected);
    const to = ok.headers.get('to') ?? '';
    uac.request('ACK', uri, 2, { to });
    assert.equal(fx.handler.calls[before]?.call.info.transport, uac.transport);
    uac.request('BYE', uri, 3, { to });
    await uac.response('BYE', 200);
    const seen = fx.handler.calls[before];
    const end = Date.now() + 3000;
    while (seen?.endReason === undefined && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    assert.equal(seen?.endReason, 'remote-bye');
  }

  it('takes a call over TLS with the certificate generated into dataDir', async () => {
    const uac = await NodeUac.tls(fx.gateway.ports.TLS as number, cert);
    try {
      await call(uac, 'sips');
    } finally {
      uac.close();
    }
  });

  it('answers a sip: Request-URI over TLS with a sip: Contact with transport=tls, not sips:', async () => {
    const uac = await NodeUac.tls(fx.gateway.ports.TLS as number, cert);
    try {
      await call(uac, 'sip');
    } finally {
      uac.close();
    }
  });

  it('takes a call over WebSocket with the "sip" subprotocol, one message per frame', async () => {
    const uac = await NodeUac.ws(fx.gateway.ports.WS as number);
    try {
      await call(uac, 'sip');
    } finally {
      uac.close();
    }
  });

  it('closes a WebSocket that did not ask for the "sip" subprotocol (RFC 7118 sec. 4)', async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${fx.gateway.ports.WS}`, 'chat');
    const code = await new Promise<number>((resolve) => {
      ws.once('close', (c) => resolve(c));
      ws.once('error', () => resolve(-1));
    });
    assert.notEqual(code, 1000);
  });

  it('answers a malformed request over WebSocket with 400 and keeps the connection', async () => {
    const uac = await NodeUac.ws(fx.gateway.ports.WS as number);
    try {
      uac.send('OPTIONS sip:x@127.0.0.1 SIP/2.0\nVia: SIP/2.0/WS h.invalid;branch=z9hG4bKbad1\nFrom: <sip:a@b>;tag=1\nTo: <sip:x@127.0.0.1>\nCall-ID: bad1\nCSeq: nonsense\nContent-Length: 0\n\n');
      const end = Date.now() + 3000;
      while (uac.raw.length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
      assert.match(uac.raw[0] ?? '', /^SIP\/2\.0 400 Bad CSeq Header\r\n/);
      assert.match(uac.raw[0] ?? '', /\r\nCall-ID: bad1\r\n/);
      uac.request('OPTIONS', 'sip:x@127.0.0.1', 1);
      await uac.response('OPTIONS', 200);
    } finally {
      uac.close();
    }
  });
});
