import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fakeContext } from '../../../../test/fakes/fake-block-context.js';
import { SafeHttp } from '../../../platform/net/safe-http.js';
import { apiSettingsSchema } from '../../../model/recipes/recipe-schema.js';
import type { AuthProfile } from '../runtime/services.js';
import { apiBlock } from './api.js';

describe('API block', () => {
  let server: Server;
  let base: string;
  const seen: { method?: string; url?: string; headers: IncomingHttpHeaders; body: string }[] = [];
  before(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen.push({ method: req.method, url: req.url, headers: req.headers, body });
        if (req.url?.startsWith('/fail')) return void res.writeHead(503).end('down');
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: { loan: { balance: 12000, due: '2026-12-01' }, items: [{ id: 'a1' }] } }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => void seen.splice(0));

  const profiles: Record<string, AuthProfile> = {
    crm: { type: 'bearer', token: 'tok-SECRET-123' },
    basic: { type: 'basic', username: 'u', password: 'pw-SECRET' },
    key: { type: 'apiKey', in: 'header', name: 'X-Api-Key', value: 'key-SECRET' },
    query: { type: 'apiKey', in: 'query', name: 'api_key', value: 'q-SECRET' },
  };
  const services = (allow: string[]) => ({
    http: new SafeHttp({ allowlist: () => allow }),
    authProfiles: { resolve: async (_t: string, name: string) => profiles[name] },
  });

  it('calls a relative path under the Base URL with auth and saves response fields by path', async () => {
    const ctx = fakeContext({ variables: { account: 'AC 42/7' }, global: { baseUrl: base }, services: services(['127.0.0.1']) });
    const settings = apiSettingsSchema.parse({
      method: 'GET',
      url: '/loans/{{account}}',
      authProfile: 'crm',
      headers: { 'X-Caller': '{{caller_number}}' },
      responseMappings: [
        { path: 'data.loan.balance', variable: 'balance' },
        { path: 'data.items.0.id', variable: 'first_item' },
      ],
    });
    assert.deepEqual(await apiBlock.run(ctx, settings, ctx.signal), { exit: 'success' });
    assert.equal(seen[0]?.url, '/loans/AC%2042%2F7', 'values are URL-encoded');
    assert.equal(seen[0]?.headers.authorization, 'Bearer tok-SECRET-123');
    assert.equal(seen[0]?.headers['x-caller'], '+919812345678');
    assert.equal(ctx.vars.get('balance'), 12000);
    assert.equal(ctx.vars.get('first_item'), 'a1');
  });

  it('sends a JSON body whose values cannot break out of their strings', async () => {
    const ctx = fakeContext({ variables: { note: 'ok", "admin": true, "x": "' }, services: services(['127.0.0.1']) });
    const settings = apiSettingsSchema.parse({ method: 'POST', url: `${base}/notes`, authProfile: 'basic', body: '{"note": "{{note}}", "amount": {{amount}}}' });
    ctx.vars.set('amount', 250);
    assert.deepEqual(await apiBlock.run(ctx, settings, ctx.signal), { exit: 'success' });
    assert.deepEqual(JSON.parse(seen[0]?.body ?? ''), { note: 'ok", "admin": true, "x": "', amount: 250 });
    assert.equal(seen[0]?.headers['content-type'], 'application/json');
    assert.equal(seen[0]?.headers.authorization, `Basic ${Buffer.from('u:pw-SECRET').toString('base64')}`);
  });

  it('supports PUT, PATCH and DELETE and API-key profiles in a header or the query', async () => {
    for (const method of ['PUT', 'PATCH', 'DELETE'] as const) {
      const ctx = fakeContext({ services: services(['127.0.0.1']) });
      await apiBlock.run(ctx, apiSettingsSchema.parse({ method, url: `${base}/x`, authProfile: 'key' }), ctx.signal);
    }
    assert.deepEqual(seen.map((s) => s.method), ['PUT', 'PATCH', 'DELETE']);
    assert.equal(seen[0]?.headers['x-api-key'], 'key-SECRET');
    const ctx = fakeContext({ services: services(['127.0.0.1']) });
    await apiBlock.run(ctx, apiSettingsSchema.parse({ method: 'GET', url: `${base}/q?a=1`, authProfile: 'query' }), ctx.signal);
    assert.equal(seen[3]?.url, '/q?a=1&api_key=q-SECRET');
  });

  it('refuses loopback targets unless allowlisted (SSRF) and leaves through failure', async () => {
    const ctx = fakeContext({ services: services([]) });
    assert.deepEqual(await apiBlock.run(ctx, apiSettingsSchema.parse({ method: 'GET', url: `${base}/x`, authProfile: 'crm' }), ctx.signal), { exit: 'failure' });
    assert.equal(seen.length, 0);
    assert.match(ctx.warnings[0] ?? '', /permission_denied/);
  });

  it('leaves through failure on an error status, an unknown profile or a refused target, never leaking secrets', async () => {
    const failing = fakeContext({ services: services(['127.0.0.1']) });
    assert.deepEqual(await apiBlock.run(failing, apiSettingsSchema.parse({ method: 'GET', url: `${base}/fail?token={{x}}`, authProfile: 'crm' }), failing.signal), { exit: 'failure' });
    const unknown = fakeContext({ services: services(['127.0.0.1']) });
    assert.deepEqual(await apiBlock.run(unknown, apiSettingsSchema.parse({ method: 'GET', url: `${base}/x`, authProfile: 'missing' }), unknown.signal), { exit: 'failure' });
    const slow = fakeContext({ services: { ...services(['127.0.0.1']), http: new SafeHttp({ allowlist: () => ['10.255.255.1'] }) } });
    assert.deepEqual(await apiBlock.run(slow, apiSettingsSchema.parse({ method: 'GET', url: 'http://127.0.0.1:9/', authProfile: 'crm', timeoutMs: 200 }), slow.signal), { exit: 'failure' });
    const everything = JSON.stringify([failing.warnings, unknown.warnings, slow.warnings, failing.said]);
    assert.ok(!/SECRET/.test(everything), everything);
    assert.match(failing.warnings.join(' '), /HTTP 503/);
  });
});
