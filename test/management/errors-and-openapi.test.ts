import assert from 'node:assert/strict';
import { forEachStore } from '../helpers/stores.js';
import { startManagementApp, type ManagementHarness } from '../helpers/management-app.js';
import { createWidgetTable, testDefinitions } from '../helpers/management-widgets.js';

forEachStore('management API error answers', (store) => {
  let h: ManagementHarness;
  before(async () => {
    await createWidgetTable(store().db);
    h = await startManagementApp(store(), { definitions: testDefinitions }, { bodyLimitBytes: 4096 });
    await h.client().post('/v1/tenants', { clientId: 'acme', name: 'Acme' });
  });
  after(() => h.close());

  it('413 for a body over the limit, with or without Content-Length', async () => {
    const big = { name: 'w', colour: 'red', tags: Array.from({ length: 1000 }, (_, i) => `tag-${i}`) };
    const res = await h.client().post('/v1/tenants/acme/widgets', big);
    assert.equal(res.status, 413);
    assert.equal(res.body['code'], 'resource_exhausted');
    // Chunked upload: no Content-Length, so the limit is enforced while reading.
    const chunks = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 10; i += 1) controller.enqueue(new TextEncoder().encode(' '.repeat(1000)));
        controller.close();
      },
    });
    const streamed = await fetch(`${h.server.url}/v1/tenants/acme/widgets`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${'op_test_operator_token_0123456789abcdef'}`, 'Content-Type': 'application/json' },
      body: chunks,
      duplex: 'half',
    } as RequestInit);
    const checked = await h.validator.check('POST', '/v1/tenants/acme/widgets', streamed);
    assert.equal(checked.status, 413);
  });

  it('415 for a body that is not JSON by content type', async () => {
    const res = await h.client().request('POST', '/v1/tenants/acme/widgets', { raw: 'name=w', contentType: 'application/x-www-form-urlencoded' });
    assert.equal(res.status, 415);
    assert.match(String(res.body['message']), /application\/json/);
    const none = await h.client().request('POST', '/v1/tenants', { raw: '{}', contentType: '' });
    assert.equal(none.status, 415);
  });

  it('415 for a charset other than UTF-8 or a compressed body; UTF-8 spelt either way is fine', async () => {
    const latin1 = await h.client().request('POST', '/v1/tenants/acme/widgets', { raw: '{"name":"w","colour":"red"}', contentType: 'application/json; charset=ISO-8859-1' });
    assert.equal(latin1.status, 415);
    assert.match(String(latin1.body['message']), /charset "iso-8859-1"/);
    const gzip = await h.client().request('POST', '/v1/tenants/acme/widgets', {
      raw: '{"name":"w","colour":"red"}', headers: { 'Content-Encoding': 'gzip' },
    });
    assert.equal(gzip.status, 415);
    assert.match(String(gzip.body['message']), /Content-Encoding "gzip"/);
    for (const [name, contentType] of [['utf', 'application/json; charset=UTF-8'], ['utf-quoted', 'application/json;charset="utf8"']]) {
      const ok = await h.client().request('POST', '/v1/tenants/acme/widgets', { raw: JSON.stringify({ name, colour: 'red' }), contentType: contentType! });
      assert.equal(ok.status, 201, ok.text);
    }
  });

  it('400 malformed for broken or empty JSON, never a 500', async () => {
    for (const raw of ['{"name": ', '', 'null', '[1,2]', '"text"']) {
      const res = await h.client().request('POST', '/v1/tenants/acme/widgets', { raw });
      assert.equal(res.status, 400, JSON.stringify(raw));
      assert.ok(['malformed', 'invalid_argument'].includes(String(res.body['code'])), raw);
    }
  });

  it('404 bad_route for unknown paths and 404 not_found for ids that cannot exist', async () => {
    const unknown = await h.client().request('GET', '/v1/nothing-here', { unchecked: true });
    assert.equal(unknown.status, 404);
    assert.deepEqual(unknown.body, { code: 'bad_route', message: 'no route for GET /v1/nothing-here' });
    const badId = await h.client().get('/v1/tenants/acme/widgets/not-a-uuid');
    assert.equal(badId.status, 404);
    assert.equal(badId.body['code'], 'not_found');
    const otherTenant = await h.client().get('/v1/tenants/nobody/widgets');
    assert.equal(otherTenant.status, 404);
  });

  it('405 with Allow for a known path and the wrong method', async () => {
    const res = await h.client().request('PATCH', '/v1/tenants/acme/widgets', { body: {}, unchecked: true });
    assert.equal(res.status, 405);
    assert.equal(res.body['code'], 'bad_route');
    assert.match(res.headers.get('allow') ?? '', /GET/);
    assert.match(res.headers.get('allow') ?? '', /POST/);
  });

  it('409 for a duplicate tenant and 400 for an invalid client ID', async () => {
    assert.equal((await h.client().post('/v1/tenants', { clientId: 'acme', name: 'Again' })).status, 409);
    const bad = await h.client().post('/v1/tenants', { clientId: 'Not A DNS Label', name: 'x' });
    assert.equal(bad.status, 400);
    assert.equal((bad.body['issues'] as Array<{ path: string }>)[0]!.path, 'clientId');
  });

  it('a tenant update cannot change the client ID', async () => {
    const res = await h.client().put('/v1/tenants/acme', { clientId: 'other', name: 'Acme' });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body['issues'], [{ path: 'clientId', message: 'clientId cannot change' }]);
    const ok = await h.client().put('/v1/tenants/acme', { clientId: 'acme', name: 'Acme Corp', timezone: 'Asia/Kolkata' });
    assert.equal(ok.status, 200);
    assert.equal((ok.body['spec'] as Record<string, unknown>)['timezone'], 'Asia/Kolkata');
  });
});

forEachStore('management OpenAPI document', (store) => {
  let h: ManagementHarness;
  before(async () => {
    h = await startManagementApp(store(), { definitions: testDefinitions });
  });
  after(() => h.close());

  it('is served without credentials as OpenAPI 3.1, with one path set per definition', async () => {
    const doc = h.document as unknown as { openapi: string; paths: Record<string, Record<string, { operationId: string }>>; components: { schemas: Record<string, unknown> } };
    assert.equal(doc.openapi, '3.1.0');
    for (const plural of ['widgets', 'gadgets']) {
      assert.deepEqual(Object.keys(doc.paths[`/v1/tenants/{clientId}/${plural}`]!).sort(), ['get', 'post']);
      assert.deepEqual(Object.keys(doc.paths[`/v1/tenants/{clientId}/${plural}/{id}`]!).sort(), ['delete', 'get', 'patch', 'put']);
    }
    assert.ok(doc.components.schemas['WidgetSpec']);
    assert.ok(doc.paths['/v1/apply']!['post']);
    const ids = Object.values(doc.paths).flatMap((p) => Object.values(p).map((o) => o.operationId));
    assert.equal(new Set(ids).size, ids.length, 'operationIds are unique');
  });

  it('describes every route of the control API under /v1: calls, the Master Report and simulations too', async () => {
    const paths = h.document.paths ?? {};
    const methods = (p: string) => Object.keys(paths[p] ?? {}).sort();
    assert.deepEqual(methods('/v1/tenants/{clientId}/calls'), ['get']);
    assert.deepEqual(methods('/v1/tenants/{clientId}/calls/{id}'), ['get']);
    assert.deepEqual(methods('/v1/tenants/{clientId}/calls/{id}/recording'), ['get']);
    assert.deepEqual(methods('/v1/tenants/{clientId}/reports/master.csv'), ['get']);
    assert.deepEqual(methods('/v1/tenants/{clientId}/simulations'), ['post']);
    assert.deepEqual(methods('/v1/tenants/{clientId}/simulations/{id}'), ['delete', 'get']);
    assert.deepEqual(methods('/v1/tenants/{clientId}/simulations/{id}/turns'), ['post']);
    // Request schemas come from the zod schemas the routes validate with.
    h.validator.assertSchema('#/components/schemas/SimulationStart', { recipe: 'Reminder', variables: { name: 'Asha' } });
    assert.throws(() => h.validator.assertSchema('#/components/schemas/SimulationStart', { recipe: 'Reminder', extra: 1 }));
    h.validator.assertSchema('#/components/schemas/SimulationTurn', { dtmf: '12#' });
    assert.throws(() => h.validator.assertSchema('#/components/schemas/SimulationTurn', { dtmf: 'x' }));
  });

  it('describes request bodies from the same zod schema that validates them', async () => {
    h.validator.assertSchema('#/components/schemas/WidgetSpec', { name: 'x', colour: 'red' });
    assert.throws(() => h.validator.assertSchema('#/components/schemas/WidgetSpec', { name: 'x', colour: 'purple' }));
  });
});
