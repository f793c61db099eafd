import assert from 'node:assert/strict';
import { forEachStore } from '../helpers/stores.js';
import { startManagementApp, type ManagementHarness, type ManagementClient } from '../helpers/management-app.js';
import { createWidgetTable, testDefinitions } from '../helpers/management-widgets.js';

forEachStore('management API credentials and tenant isolation', (store) => {
  let h: ManagementHarness;
  let tokenA: string;
  let tokenB: string;
  let widgetB: string;
  let tokenIdB: string;

  before(async () => {
    await createWidgetTable(store().db);
    h = await startManagementApp(store(), { definitions: testDefinitions });
    const op = h.client();
    await op.post('/v1/tenants', { clientId: 'tenant-a', name: 'A' });
    await op.post('/v1/tenants', { clientId: 'tenant-b', name: 'B' });
    const a = await op.post('/v1/tenants/tenant-a/tokens', { name: 'ci', scopes: ['management'] });
    assert.equal(a.status, 201);
    tokenA = String(a.body['token']);
    const b = await op.post('/v1/tenants/tenant-b/tokens', { name: 'ci', scopes: ['management'] });
    tokenB = String(b.body['token']);
    tokenIdB = String(b.body['id']);
    widgetB = String((await op.post('/v1/tenants/tenant-b/widgets', { name: 'secret-widget', colour: 'red' })).body['id']);
  });
  after(() => h.close());

  describe('operator credential', () => {
    it('answers 401 with WWW-Authenticate for a missing, malformed or wrong token', async () => {
      const cases: Array<ManagementClient> = [h.client(''), h.client('wrong-token'), h.client(`${tokenA}x`)];
      for (const client of cases) {
        const res = await client.get('/v1/tenants');
        assert.equal(res.status, 401);
        assert.equal(res.body['code'], 'unauthenticated');
        assert.equal(res.headers.get('www-authenticate'), 'Bearer');
      }
      const basic = await h.client('').request('GET', '/v1/tenants', { headers: { Authorization: 'Basic b3A6cHc=' } });
      assert.equal(basic.status, 401);
    });

    it('reaches every tenant', async () => {
      const op = h.client();
      assert.equal((await op.get('/v1/tenants/tenant-a/widgets')).status, 200);
      assert.equal((await op.get(`/v1/tenants/tenant-b/widgets/${widgetB}`)).status, 200);
      const list = await op.get('/v1/tenants');
      assert.deepEqual(list.body.items!.map((t) => (t['spec'] as Record<string, unknown>)['clientId']), ['tenant-a', 'tenant-b']);
    });
  });

  describe('tenant management token', () => {
    it('reaches its own tenant', async () => {
      const a = h.client(tokenA);
      assert.equal((await a.get('/v1/tenants/tenant-a')).status, 200);
      assert.equal((await a.post('/v1/tenants/tenant-a/widgets', { name: 'mine', colour: 'blue' })).status, 201);
      assert.equal((await a.get('/v1/tenants/tenant-a/widgets')).body.items!.length, 1);
    });

    it('never reaches another tenant: every route answers 404 as if it did not exist', async () => {
      const a = h.client(tokenA);
      const attempts: Array<[string, string, unknown?]> = [
        ['GET', '/v1/tenants/tenant-b'],
        ['PUT', '/v1/tenants/tenant-b', { name: 'pwned' }],
        ['DELETE', '/v1/tenants/tenant-b'],
        ['GET', '/v1/tenants/tenant-b/tokens'],
        ['POST', '/v1/tenants/tenant-b/tokens', { name: 'x', scopes: ['management'] }],
        ['GET', `/v1/tenants/tenant-b/tokens/${tokenIdB}`],
        ['DELETE', `/v1/tenants/tenant-b/tokens/${tokenIdB}`],
        ['GET', '/v1/tenants/tenant-b/widgets'],
        ['POST', '/v1/tenants/tenant-b/widgets', { name: 'x', colour: 'red' }],
        ['GET', `/v1/tenants/tenant-b/widgets/${widgetB}`],
        ['PUT', `/v1/tenants/tenant-b/widgets/${widgetB}`, { name: 'x', colour: 'red' }],
        ['DELETE', `/v1/tenants/tenant-b/widgets/${widgetB}`],
        // Another tenant's resource id under one's own tenant path is not found either.
        ['GET', `/v1/tenants/tenant-a/widgets/${widgetB}`],
        ['PUT', `/v1/tenants/tenant-a/widgets/${widgetB}`, { name: 'x', colour: 'red' }],
        ['DELETE', `/v1/tenants/tenant-a/widgets/${widgetB}`],
        ['DELETE', `/v1/tenants/tenant-a/tokens/${tokenIdB}`],
      ];
      const missing = await a.get('/v1/tenants/no-such-tenant');
      for (const [method, path, body] of attempts) {
        const res = await a.request(method, path, body === undefined ? {} : { body });
        assert.equal(res.status, 404, `${method} ${path}`);
        assert.equal(res.body['code'], 'not_found', `${method} ${path}`);
      }
      assert.equal(missing.status, 404);
      // Nothing of B changed: its widget, its token and its name are intact.
      const op = h.client();
      assert.equal((await op.get(`/v1/tenants/tenant-b/widgets/${widgetB}`)).body['spec'] !== undefined, true);
      assert.equal((await op.get('/v1/tenants/tenant-b')).body['spec'] !== undefined, true);
      assert.equal(((await op.get('/v1/tenants/tenant-b')).body['spec'] as Record<string, unknown>)['name'], 'B');
      assert.equal((await h.client(tokenB).get('/v1/tenants/tenant-b/widgets')).status, 200, "B's token still works");
    });

    it('cannot list or create tenants (403), nor apply another tenant', async () => {
      const a = h.client(tokenA);
      assert.equal((await a.get('/v1/tenants')).status, 403);
      const ownDelete = await a.delete('/v1/tenants/tenant-a');
      assert.equal(ownDelete.status, 403);
      assert.match(String(ownDelete.body['message']), /only the operator credential may delete tenants/);
      assert.equal((await a.put('/v1/tenants/tenant-a', { name: 'A renamed' })).status, 200, 'a tenant may edit its own settings');
      const created = await a.post('/v1/tenants', { clientId: 'evil', name: 'Evil' });
      assert.equal(created.status, 403);
      assert.equal(created.body['code'], 'permission_denied');
      const applied = await a.request('POST', '/v1/apply', {
        raw: 'apiVersion: vap/v1\nkind: Widget\ntenant: tenant-b\nspec: {name: injected, colour: red}\n',
        contentType: 'application/yaml',
      });
      assert.equal(applied.status, 404);
      assert.match(String(applied.body['message']), /tenant "tenant-b" not found/);
      const tenantDoc = await a.request('POST', '/v1/apply', { raw: 'apiVersion: vap/v1\nkind: Tenant\nspec: {clientId: evil, name: Evil}\n', contentType: 'application/yaml' });
      assert.equal(tenantDoc.status, 403);
      assert.equal(tenantDoc.body['code'], 'permission_denied');
      assert.match(String(tenantDoc.body['message']), /only the operator/);
      const names = (await h.client().get('/v1/tenants/tenant-b/widgets')).body.items!.map((i) => (i['spec'] as Record<string, unknown>)['name']);
      assert.deepEqual(names, ['secret-widget']);
    });

    it('is refused once revoked, and a token without the management scope never works', async () => {
      const op = h.client();
      const campaignOnly = await op.post('/v1/tenants/tenant-a/tokens', { name: 'campaign', scopes: ['campaign'] });
      assert.equal((await h.client(String(campaignOnly.body['token'])).get('/v1/tenants/tenant-a')).status, 401);
      const temp = await op.post('/v1/tenants/tenant-a/tokens', { name: 'temp', scopes: ['management'] });
      const client = h.client(String(temp.body['token']));
      assert.equal((await client.get('/v1/tenants/tenant-a')).status, 200);
      assert.equal((await op.delete(`/v1/tenants/tenant-a/tokens/${String(temp.body['id'])}`)).status, 204);
      assert.equal((await client.get('/v1/tenants/tenant-a')).status, 401);
    });
  });

  describe('tokens', () => {
    it('returns the clear token only at issue; lists show the prefix, never the secret', async () => {
      const op = h.client();
      const issued = await op.post('/v1/tenants/tenant-a/tokens', { name: 'listing', scopes: ['sandbox', 'campaign'] });
      assert.equal(issued.status, 201);
      assert.equal(issued.headers.get('cache-control'), 'no-store');
      const token = String(issued.body['token']);
      assert.ok(token.startsWith(String(issued.body['prefix'])));
      const list = await op.get('/v1/tenants/tenant-a/tokens?limit=200');
      assert.ok(!list.text.includes(token));
      const row = list.body.items!.find((t) => t['id'] === issued.body['id']);
      assert.deepEqual(row?.['scopes'], ['sandbox', 'campaign']);
      assert.equal('token' in (row ?? {}), false);
      const one = await op.get(`/v1/tenants/tenant-a/tokens/${String(issued.body['id'])}`);
      assert.equal(one.body['name'], 'listing');
    });

    it('pages tokens and validates the issue request', async () => {
      const op = h.client();
      const first = await op.get('/v1/tenants/tenant-a/tokens?limit=1');
      assert.equal(first.body.items!.length, 1);
      const second = await op.get(`/v1/tenants/tenant-a/tokens?limit=1&cursor=${encodeURIComponent(String(first.body['nextCursor']))}`);
      assert.notEqual(second.body.items![0]!['id'], first.body.items![0]!['id']);
      const bad = await op.post('/v1/tenants/tenant-a/tokens', { name: '', scopes: ['root'] });
      assert.equal(bad.status, 400);
      assert.deepEqual((bad.body['issues'] as Array<{ path: string }>).map((i) => i.path).sort(), ['name', 'scopes[0]']);
      assert.equal((await op.get('/v1/tenants/tenant-a/tokens?cursor=garbage')).status, 400);
    });
  });
});
