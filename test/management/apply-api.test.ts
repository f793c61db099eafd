import assert from 'node:assert/strict';
import { forEachStore } from '../helpers/stores.js';
import { startManagementApp, type ManagementHarness, type ClientResponse } from '../helpers/management-app.js';
import { createWidgetTable, testDefinitions } from '../helpers/management-widgets.js';

const yamlDocs = `
# gadgets first on purpose: apply orders by dependency, not by position
apiVersion: vap/v1
kind: Gadget
tenant: shop
spec:
  name: g1
  widget: w1
---
apiVersion: vap/v1
kind: Widget
tenant: shop
spec: {name: w1, colour: red, tags: [a, b], apiKey: sk-test-1}
---
apiVersion: vap/v1
kind: Tenant
spec: {clientId: shop, name: Shop, timezone: Asia/Kolkata}
---
`;

forEachStore('POST /v1/apply', (store) => {
  let h: ManagementHarness;
  const apply = (body: string, query = '', contentType = 'application/yaml'): Promise<ClientResponse> =>
    h.client().request('POST', `/v1/apply${query}`, { raw: body, contentType });

  before(async () => {
    await createWidgetTable(store().db);
    h = await startManagementApp(store(), { definitions: testDefinitions });
  });
  after(() => h.close());

  it('dry run reports creations and writes nothing', async () => {
    const res = await apply(yamlDocs, '?dryRun=true');
    assert.equal(res.status, 200);
    assert.equal(res.body['dryRun'], true);
    assert.deepEqual(res.body['summary'], { created: 3, updated: 0, unchanged: 0 });
    assert.equal((await h.client().get('/v1/tenants/shop')).status, 404);
  });

  it('creates in dependency order, then reports no change the second time', async () => {
    const first = await apply(yamlDocs);
    assert.equal(first.status, 200);
    assert.deepEqual(first.body['summary'], { created: 3, updated: 0, unchanged: 0 });
    const results = first.body['results'] as Array<Record<string, unknown>>;
    assert.deepEqual(results.map((r) => [r['index'], r['kind'], r['key'], r['action']]), [
      [0, 'Gadget', 'g1', 'created'],
      [1, 'Widget', 'w1', 'created'],
      [2, 'Tenant', 'shop', 'created'],
    ]);
    const second = await apply(yamlDocs);
    assert.equal(second.body['changed'], false);
    assert.deepEqual(second.body['summary'], { created: 0, updated: 0, unchanged: 3 });
  });

  it('updates what changed only, keeping a secret that is not repeated', async () => {
    const changed = yamlDocs.replace('colour: red', 'colour: blue').replace(', apiKey: sk-test-1', '');
    const res = await apply(changed);
    assert.deepEqual(
      (res.body['results'] as Array<Record<string, unknown>>).map((r) => r['action']),
      ['unchanged', 'updated', 'unchanged'],
    );
    const widget = (await h.client().get('/v1/tenants/shop/widgets')).body.items![0]!;
    assert.deepEqual(widget['spec'], { name: 'w1', colour: 'blue', tags: ['a', 'b'], size: 1, favourite: false, apiKey: '********' });
  });

  it('accepts JSON: a list of documents', async () => {
    const res = await apply(JSON.stringify([{ apiVersion: 'vap/v1', kind: 'Widget', tenant: 'shop', spec: { name: 'w2', colour: 'green' } }]), '', 'application/json');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body['summary'], { created: 1, updated: 0, unchanged: 0 });
  });

  it('is all or nothing: a failing document rolls back the ones before it, and names itself', async () => {
    const docs = `apiVersion: vap/v1
kind: Widget
tenant: shop
spec: {name: w3, colour: red}
---
apiVersion: vap/v1
kind: Gadget
tenant: shop
spec: {name: g9, widget: missing}
`;
    const res = await apply(docs);
    assert.equal(res.status, 400);
    assert.match(String(res.body['message']), /^documents\[1\] \(Gadget "g9" of tenant "shop", document 2\): Widget "missing" not found/);
    assert.deepEqual(res.body['issues'], [{ path: 'documents[1].spec.widget', message: 'Widget "missing" not found' }]);
    const names = (await h.client().get('/v1/tenants/shop/widgets')).body.items!.map((i) => (i['spec'] as Record<string, unknown>)['name']);
    assert.ok(!names.includes('w3'), 'w3 was rolled back');
  });

  it('reports every invalid document at once with its index and field path', async () => {
    const docs = `apiVersion: vap/v1
kind: Widget
tenant: shop
spec: {name: ok, colour: purple}
---
apiVersion: vap/v2
kind: Widget
spec: {}
---
apiVersion: vap/v1
kind: Sprocket
tenant: shop
spec: {}
---
apiVersion: vap/v1
kind: Widget
spec: {name: x, colour: red}
---
apiVersion: vap/v1
kind: Widget
tenant: shop
spec: {name: fine, colour: blue}
`;
    const res = await apply(docs);
    assert.equal(res.status, 400);
    const paths = (res.body['issues'] as Array<{ path: string }>).map((i) => i.path);
    assert.deepEqual(paths, ['documents[1].apiVersion']);
    const fixed = await apply(docs.replace('vap/v2\nkind: Widget\nspec: {}', 'vap/v1\nkind: Widget\ntenant: shop\nspec: {name: fine, colour: red}'));
    assert.equal(fixed.status, 400);
    assert.deepEqual(
      (fixed.body['issues'] as Array<{ path: string }>).map((i) => i.path),
      ['documents[0].spec.colour', 'documents[2].kind', 'documents[3].tenant', 'documents[4]'],
    );
  });

  it('answers 400 for YAML syntax errors, 415 for other content types, 400 for a bad dryRun', async () => {
    const broken = await apply('apiVersion: vap/v1\nkind: [unclosed\n');
    assert.equal(broken.status, 400);
    assert.equal(broken.body['code'], 'malformed');
    assert.match(String(broken.body['message']), /document 1: YAML error/);
    assert.equal((await apply('x', '', 'text/plain')).status, 415);
    assert.equal((await apply(yamlDocs, '?dryRun=maybe')).status, 400);
    const misspelt = await apply(yamlDocs, '?dryrun=true');
    assert.equal(misspelt.status, 400, 'a misspelt dry-run flag is refused, not applied for real');
    assert.deepEqual(misspelt.body['issues'], [{ path: 'dryrun', message: 'unknown query parameter' }]);
    assert.equal((await apply('# nothing\n')).status, 400);
  });

  it('refuses to delete a used resource (412) and the apply of a tenant token stays in its tenant', async () => {
    const op = h.client();
    const w1 = (await op.get('/v1/tenants/shop/widgets?name=w1')).body.items![0]!;
    const refused = await op.delete(`/v1/tenants/shop/widgets/${String(w1['id'])}`);
    assert.equal(refused.status, 412);
    assert.match(String(refused.body['message']), /used by Gadget "g1"/);
    const token = String((await op.post('/v1/tenants/shop/tokens', { name: 'gitops', scopes: ['management'] })).body['token']);
    const res = await h.client(token).request('POST', '/v1/apply', {
      raw: 'apiVersion: vap/v1\nkind: Widget\ntenant: shop\nspec: {name: from-tenant, colour: green}\n',
      contentType: 'application/yaml',
    });
    assert.equal(res.status, 200);
    assert.equal((res.body['results'] as Array<Record<string, unknown>>)[0]!['action'], 'created');
    const tenantDoc = await h.client(token).request('POST', '/v1/apply', {
      raw: 'apiVersion: vap/v1\nkind: Tenant\nspec: {clientId: shop, name: Renamed}\n',
      contentType: 'application/yaml',
    });
    assert.equal(tenantDoc.status, 403, 'an operator-only document is a credential problem, as through the API');
    assert.equal(tenantDoc.body['code'], 'permission_denied');
    assert.deepEqual(tenantDoc.body['issues'], [{ path: 'documents[0].kind', message: 'only the operator credential may apply Tenant documents' }]);
  });
});
