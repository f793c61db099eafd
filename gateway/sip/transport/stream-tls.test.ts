import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createServer, type Server, type TLSSocket } from 'node:tls';
import { waitFor } from '../../../test/helpers/sipp.js';
import { Headers } from '../message/headers.js';
import { SipRequest } from '../message/message.js';
import { loadOrCreateTlsCredentials, type TlsCredentials } from './certificate.js';
import { StreamTransport } from './stream.js';

const options = (): SipRequest =>
  new SipRequest('OPTIONS', 'sips:trunk.example.test', new Headers([['Via', 'SIP/2.0/TLS 127.0.0.1;branch=z9hG4bKtls1'], ['From', '<sip:gw@x>;tag=1'], ['To', '<sips:trunk.example.test>'], ['Call-ID', 'tls-name'], ['CSeq', '1 OPTIONS']]));

/**
 * Outgoing TLS checks the peer against the SIP domain it was resolved from (RFC 5922 sec. 4,
 * RFC 3261 sec. 26.3.1) and names it in SNI (RFC 6066 sec. 3), as a trunk provider that hosts
 * several domains on one address needs; an IP literal target still has its address checked.
 */
describe('TLS transport: the peer is the domain it was resolved from', function () {
  this.timeout(20_000);
  let dir: string;
  let creds: TlsCredentials;
  let peer: Server;
  let port: number;
  /** SNI names the peer was asked for, and what it received. */
  const names: string[] = [];
  const received: string[] = [];
  let client: StreamTransport;

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'vap-tls-name-'));
    // A self-signed certificate for trunk.example.test (its SAN also names 127.0.0.1 and localhost).
    creds = await loadOrCreateTlsCredentials({ dataDir: dir, commonName: 'trunk.example.test' });
    peer = createServer({ cert: creds.cert, key: creds.key }, (socket: TLSSocket) => {
      names.push(String(socket.servername));
      socket.on('data', (d: Buffer) => received.push(d.toString('latin1')));
    });
    await new Promise<void>((r) => peer.listen(0, '127.0.0.1', r));
    port = (peer.address() as { port: number }).port;
    client = await StreamTransport.listen({ host: '127.0.0.1', port: 0, tls: { cert: creds.cert, key: creds.key }, trustedCa: creds.cert }, () => undefined);
  });
  after(async () => {
    await client?.close();
    await new Promise<void>((r) => peer.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    names.length = 0;
    received.length = 0;
  });

  it('connects to a peer whose certificate names the domain, and sends the domain as SNI', async () => {
    const flow = client.flowTo({ address: '127.0.0.1', port, serverName: 'trunk.example.test' });
    flow.send(options());
    await waitFor(() => received.join('').includes('Call-ID: tls-name'));
    assert.deepEqual(names, ['trunk.example.test']);
  });

  it('refuses a peer whose certificate does not name the domain, though it names the address', async () => {
    const flow = client.flowTo({ address: '127.0.0.1', port, serverName: 'other.example.test' });
    const failures: Error[] = [];
    flow.send(options(), (e) => failures.push(e));
    await waitFor(() => !flow.open && failures.length > 0);
    assert.deepEqual(received, [], 'nothing was sent to the wrong peer');
    // The sender hears why (its transaction ends with 503 now, not at Timer F).
    assert.match(String(failures[0]?.message), /other\.example\.test/);
  });

  it('checks an IP literal target against the address, with no SNI (RFC 6066 allows no literal)', async () => {
    const flow = client.flowTo({ address: '127.0.0.1', port });
    flow.send(options());
    await waitFor(() => received.join('').includes('Call-ID: tls-name'));
    assert.deepEqual(names, ['false']);
  });
});
