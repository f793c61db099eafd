import assert from 'node:assert/strict';
import { createLogger } from '../../core/logger.js';
import { serve, type RunningServer } from '../../control-api/platform/http/serve.js';
import { createSandboxApp } from '../../control-api/api/sandbox/sandbox-app.js';
import type { Store } from '../../control-api/platform/store/database.js';
import { startManagementApp, operatorToken, type ManagementHarness } from '../helpers/management-app.js';
import { RawHttpConnection, type RawUpload } from '../helpers/raw-http.js';
import { freshStore } from '../helpers/stores.js';

const MiB = 1024 * 1024;
const staticToken = 'static-sandbox-token-0123456789';

/** Fails instead of hanging when the server stops reading and the upload can never finish. */
async function within<T>(ms: number, what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not done within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A body over the limit is answered 413 before it is read; closing with the rest of the upload
 * unread reset the connection, so Node's fetch reported EPIPE and simple clients nothing at all,
 * and a chunked upload to the control API stalled until the request timeout (issue 12). Every
 * body-taking route must let the client finish its upload, answer, and keep the connection usable.
 */
describe('oversized request bodies', function () {
  this.timeout(120_000);
  let store: Store;
  let control: ManagementHarness;
  let sandbox: RunningServer;
  let campaignToken: string;

  before(async function () {
    this.timeout(120_000);
    store = await freshStore('postgres');
    control = await startManagementApp(store);
    sandbox = await serve(createSandboxApp({ store, logger: createLogger({ level: 'silent' }), staticTokens: [staticToken] }), '127.0.0.1', 0);
    const op = control.client();
    assert.equal((await op.post('/v1/tenants', { clientId: 'acme', name: 'Acme' })).status, 201);
    const issued = await op.post('/v1/tenants/acme/tokens', { name: 'campaign', scopes: ['campaign'] });
    campaignToken = String(issued.body['token']);
  });
  after(async () => {
    await sandbox?.close(0);
    await control?.close();
    await store?.close();
  });

  const routes = (): Array<{ name: string; port: number; head: string; size: number; status: number }> => [
    { name: 'sandbox POST /plants', port: sandbox.port, head: `POST /plants HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${staticToken}\r\nContent-Type: application/json`, size: 8 * MiB, status: 413 },
    { name: 'sandbox POST /plants, bad token', port: sandbox.port, head: 'POST /plants HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer nope\r\nContent-Type: application/json', size: 8 * MiB, status: 401 },
    { name: 'POST /v1/apply', port: control.server.port, head: `POST /v1/apply HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${operatorToken}\r\nContent-Type: application/yaml`, size: 8 * MiB, status: 413 },
    { name: 'POST /v1/tenants/acme/recipes', port: control.server.port, head: `POST /v1/tenants/acme/recipes HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${operatorToken}\r\nContent-Type: application/json`, size: 8 * MiB, status: 413 },
    { name: 'POST /v1/tenants, wrong content type', port: control.server.port, head: `POST /v1/tenants HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${operatorToken}\r\nContent-Type: text/plain`, size: 4 * MiB, status: 415 },
    // Twirp has no 413: an oversized SendMessage body is `malformed` (400), docs/api.md.
    { name: 'SendMessage', port: control.server.port, head: `POST /api/v1/Campaign/SendMessage HTTP/1.1\r\nHost: acme.localhost\r\nAuthorization: ${campaignToken}\r\nContent-Type: application/json`, size: 8 * MiB, status: 400 },
  ];

  for (const chunked of [false, true]) {
    it(`reaches a client that reads only after its upload (${chunked ? 'chunked' : 'Content-Length'}), and the connection stays usable`, async () => {
      for (const route of routes()) {
        const connection = await RawHttpConnection.open(route.port);
        try {
          const upload: RawUpload = { head: route.head, body: Buffer.alloc(route.size, 0x20), chunked };
          await within(20_000, `${route.name}: upload`, connection.send(upload));
          const answer = await connection.response();
          assert.equal(answer.status, route.status, `${route.name}: ${answer.body}`);
          await connection.send({ head: 'GET /healthz HTTP/1.1\r\nHost: localhost', body: Buffer.alloc(0) });
          assert.equal((await connection.response()).status, 200, `${route.name}: the kept-alive connection answers the next request`);
        } finally {
          connection.destroy();
        }
      }
    });
  }

  it("reaches Node's fetch (undici), with a whole body and with a streamed one", async () => {
    const targets = [
      { url: `${sandbox.url}/plants`, auth: `Bearer ${staticToken}`, type: 'application/json' },
      { url: `${control.server.url}/v1/apply`, auth: `Bearer ${operatorToken}`, type: 'application/yaml' },
    ];
    for (const target of targets) {
      for (const streamed of [false, true]) {
        // A stream paced like a real upload: the answer comes long before the last byte.
        let sent = 0;
        const body = streamed
          ? new ReadableStream<Uint8Array>({
              async pull(controller) {
                if (sent >= 16 * MiB) return controller.close();
                await new Promise((r) => setImmediate(r));
                controller.enqueue(new Uint8Array(256 * 1024).fill(0x20));
                sent += 256 * 1024;
              },
            })
          : Buffer.alloc(16 * MiB, 0x20);
        const response = await fetch(target.url, {
          method: 'POST',
          headers: { Authorization: target.auth, 'Content-Type': target.type },
          body,
          duplex: 'half',
          signal: AbortSignal.timeout(30_000),
        } as RequestInit);
        assert.equal(response.status, 413, `${target.url} (${streamed ? 'streamed' : 'whole'})`);
        assert.match(await response.text(), /exceeds/);
      }
    }
  });
});
