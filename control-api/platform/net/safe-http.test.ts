import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AppError } from '../../../core/errors.js';
import { isBlockedAddress } from './address-policy.js';
import { SafeHttp } from './safe-http.js';

describe('SafeHttp (SSRF-safe outbound requests)', () => {
  let server: Server;
  let port: number;
  before(async () => {
    server = createServer((req, res) => {
      if (req.url === '/big') return void res.end(Buffer.alloc(64 * 1024, 'a'));
      if (req.url === '/hang') return;
      if (req.url === '/to-loopback') return void res.writeHead(302, { location: `http://127.0.0.1:${port}/echo` }).end();
      if (req.url === '/to-named') return void res.writeHead(302, { location: `http://api.partner.test:${port}/echo` }).end();
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ method: req.method, body, auth: req.headers.authorization ?? null })));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  // A resolver for names that exist only in this test; everything points at loopback.
  const lookup = async (host: string) => {
    if (host === 'api.partner.test' || host === 'localhost') return [{ address: '127.0.0.1', family: 4 }];
    if (host === 'rebind.test') return [{ address: '93.184.216.34', family: 4 }, { address: '127.0.0.1', family: 4 }];
    throw new Error(`ENOTFOUND ${host}`);
  };
  const client = (allow: string[], maxResponseBytes?: number) => new SafeHttp({ allowlist: () => allow, lookup, maxResponseBytes });
  const get = (http: SafeHttp, url: string, timeoutMs = 2000) =>
    http.request('t1', { method: 'GET', url, headers: {}, timeoutMs, signal: new AbortController().signal });
  const rejectsWith = async (promise: Promise<unknown>, code: string, pattern?: RegExp): Promise<void> => {
    await assert.rejects(promise, (error: unknown) => {
      assert.ok(error instanceof AppError, String(error));
      assert.equal(error.code, code);
      if (pattern) assert.match(error.message, pattern);
      return true;
    });
  };

  it('classifies loopback, private, link-local, metadata and mapped addresses as blocked', () => {
    for (const address of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '::ffff:7f00:1']) {
      assert.equal(isBlockedAddress(address), true, address);
    }
    for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700::1111']) assert.equal(isBlockedAddress(address), false, address);
  });

  it('refuses loopback by default, by address and by name', async () => {
    await rejectsWith(get(client([]), `http://127.0.0.1:${port}/echo`), 'permission_denied', /127\.0\.0\.1/);
    await rejectsWith(get(client([]), `http://localhost:${port}/echo`), 'permission_denied');
    await rejectsWith(get(client([]), `http://[::1]:${port}/echo`), 'permission_denied');
    await rejectsWith(get(client([]), 'http://169.254.169.254/latest/meta-data/'), 'permission_denied');
  });

  it('refuses a name whose answers include a private address (rebinding)', async () => {
    await rejectsWith(get(client([]), `http://rebind.test:${port}/echo`), 'permission_denied');
  });

  it('reaches an allowlisted loopback target by address, name or CIDR, with method and body', async () => {
    const byAddress = await client(['127.0.0.1']).request('t1', { method: 'POST', url: `http://127.0.0.1:${port}/echo`, headers: { authorization: 'Bearer x' }, body: '{"a":1}', timeoutMs: 2000, signal: new AbortController().signal });
    assert.equal(byAddress.status, 200);
    assert.deepEqual(JSON.parse(byAddress.body), { method: 'POST', body: '{"a":1}', auth: 'Bearer x' });
    assert.equal((await get(client(['api.partner.test']), `http://api.partner.test:${port}/echo`)).status, 200);
    assert.equal((await get(client(['127.0.0.0/8']), `http://localhost:${port}/echo`)).status, 200);
  });

  it('checks every redirect hop again', async () => {
    await rejectsWith(get(client(['api.partner.test']), `http://api.partner.test:${port}/to-loopback`), 'permission_denied');
    const followed = await get(client(['127.0.0.1', 'api.partner.test']), `http://127.0.0.1:${port}/to-named`);
    assert.equal(JSON.parse(followed.body).method, 'GET');
  });

  it('caps the response size and the time', async () => {
    await rejectsWith(get(client(['127.0.0.1'], 16 * 1024), `http://127.0.0.1:${port}/big`), 'resource_exhausted');
    const started = Date.now();
    await rejectsWith(get(client(['127.0.0.1']), `http://127.0.0.1:${port}/hang`, 200), 'deadline_exceeded');
    assert.ok(Date.now() - started < 1500);
  });

  it('rejects non-http schemes and credentials in the URL', async () => {
    await rejectsWith(get(client([]), 'file:///etc/passwd'), 'invalid_argument');
    await rejectsWith(get(client(['127.0.0.1']), `http://user:pw@127.0.0.1:${port}/echo`), 'invalid_argument');
  });
});
