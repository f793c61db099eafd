import assert from 'node:assert/strict';
import { forEachStore } from '../helpers/stores.js';
import { startManagementApp, type ManagementHarness } from '../helpers/management-app.js';
import { createWidgetTable, testDefinitions } from '../helpers/management-widgets.js';

forEachStore('management API over any resource definition', (store) => {
  let h: ManagementHarness;
  before(async () => {
    await createWidgetTable(store().db);
    h = await startManagementApp(store(), { definitions: testDefinitions });
    const op = h.client();
    assert.equal((await op.post('/v1/tenants', { clientId: 'acme', name: 'Acme' })).status, 201);
    assert.equal((await op.post('/v1/tenants', { clientId: 'globex', name: 'Globex', timezone: 'Asia/Kolkata' })).status, 201);
  });
  after(() => h.close());

  describe('CRUD', () => {
    it('creates, reads, replaces and deletes a resource, with the secret write-only', async () => {
      const op = h.client();
      const created = await op.post('/v1/tenants/acme/widgets', { name: 'w1', colour: 'red', apiKey: 'sk-live-123' });
      assert.equal(created.status, 201);
      assert.equal(created.body['kind'], 'Widget');
      assert.equal(created.body['tenant'], 'acme');
      assert.deepEqual(created.body['spec'], { name: 'w1', colour: 'red', tags: [], size: 1, favourite: false, apiKey: '********' });
      const id = String(created.body['id']);
      assert.equal(created.headers.get('location'), `/v1/tenants/acme/widgets/${id}`);
      assert.ok(!created.text.includes('sk-live-123'));

      const read = await op.get(`/v1/tenants/acme/widgets/${id}`);
      assert.equal(read.status, 200);
      assert.deepEqual(read.body, created.body);

      const replaced = await op.put(`/v1/tenants/acme/widgets/${id}`, { name: 'w1', colour: 'blue', size: 3, apiKey: '********' });
      assert.equal(replaced.status, 200);
      assert.equal((replaced.body['spec'] as Record<string, unknown>)['colour'], 'blue');
      assert.equal((replaced.body['spec'] as Record<string, unknown>)['apiKey'], '********', 'a masked secret keeps the stored one');

      assert.equal((await op.delete(`/v1/tenants/acme/widgets/${id}`)).status, 204);
      const gone = await op.get(`/v1/tenants/acme/widgets/${id}`);
      assert.equal(gone.status, 404);
      assert.equal(gone.body['code'], 'not_found');
    });

    it('answers 409 already_exists on a natural-key clash', async () => {
      const op = h.client();
      assert.equal((await op.post('/v1/tenants/acme/widgets', { name: 'dup', colour: 'red' })).status, 201);
      const again = await op.post('/v1/tenants/acme/widgets', { name: 'dup', colour: 'green' });
      assert.equal(again.status, 409);
      assert.equal(again.body['code'], 'already_exists');
    });

    it('rejects an invalid spec with 400 and every issue path', async () => {
      const res = await h.client().post('/v1/tenants/acme/widgets', { name: '', colour: 'purple', size: 11 });
      assert.equal(res.status, 400);
      assert.equal(res.body['code'], 'invalid_argument');
      const paths = (res.body['issues'] as Array<{ path: string }>).map((i) => i.path).sort();
      assert.deepEqual(paths, ['colour', 'name', 'size']);
    });

    it('refuses to delete a resource another one uses, naming the user (412)', async () => {
      const op = h.client();
      const widget = await op.post('/v1/tenants/acme/widgets', { name: 'used', colour: 'green' });
      assert.equal((await op.post('/v1/tenants/acme/gadgets', { name: 'g1', widget: 'used' })).status, 201);
      const refused = await op.delete(`/v1/tenants/acme/widgets/${String(widget.body['id'])}`);
      assert.equal(refused.status, 412);
      assert.equal(refused.body['code'], 'failed_precondition');
      assert.match(String(refused.body['message']), /Gadget "g1"/);
    });

    it('answers 400 naming the field for a dangling reference', async () => {
      const res = await h.client().post('/v1/tenants/acme/gadgets', { name: 'g2', widget: 'nope' });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body['issues'], [{ path: 'widget', message: 'Widget "nope" not found' }]);
    });
  });

  describe('listing', () => {
    before(async () => {
      const op = h.client();
      for (let i = 0; i < 7; i += 1) {
        const res = await op.post('/v1/tenants/globex/widgets', { name: `p${i}`, colour: i % 2 ? 'red' : 'blue', tags: i < 3 ? ['hot', 'new'] : ['new'], favourite: i === 5 });
        assert.equal(res.status, 201);
      }
    });

    it('pages with limit and cursor until nextCursor is absent, every item once', async () => {
      const op = h.client();
      const seen: string[] = [];
      let path = '/v1/tenants/globex/widgets?limit=3';
      for (let pages = 0; pages < 10; pages += 1) {
        const res = await op.get(path);
        assert.equal(res.status, 200);
        assert.ok(res.body.items!.length <= 3);
        seen.push(...res.body.items!.map((i) => String((i['spec'] as Record<string, unknown>)['name'])));
        if (!res.body['nextCursor']) break;
        path = `/v1/tenants/globex/widgets?limit=3&cursor=${encodeURIComponent(String(res.body['nextCursor']))}`;
      }
      assert.deepEqual(seen, ['p0', 'p1', 'p2', 'p3', 'p4', 'p5', 'p6']);
    });

    it('rejects a limit outside 1..200 and unknown parameters with 400', async () => {
      const op = h.client();
      for (const query of ['limit=0', 'limit=201', 'limit=abc', 'limit=1.5', 'colour=red&bogus=1']) {
        const res = await op.get(`/v1/tenants/globex/widgets?${query}`);
        assert.equal(res.status, 400, query);
        assert.equal(res.body['code'], 'invalid_argument');
      }
    });

    it('filters by scalar fields and by list membership (all of repeated values)', async () => {
      const op = h.client();
      const names = async (query: string): Promise<string[]> =>
        (await op.get(`/v1/tenants/globex/widgets?${query}`)).body.items!.map((i) => String((i['spec'] as Record<string, unknown>)['name']));
      assert.deepEqual(await names('colour=RED'), ['p1', 'p3', 'p5']);
      assert.deepEqual(await names('tags=hot&tags=new'), ['p0', 'p1', 'p2']);
      assert.deepEqual(await names('tags=hot&colour=red'), ['p1']);
      assert.deepEqual(await names('favourite=true'), ['p5']);
      const paged = await op.get('/v1/tenants/globex/widgets?colour=red&limit=2');
      assert.equal(paged.body.items!.length, 2);
      const rest = await op.get(`/v1/tenants/globex/widgets?colour=red&limit=2&cursor=${encodeURIComponent(String(paged.body['nextCursor']))}`);
      assert.deepEqual(rest.body.items!.map((i) => (i['spec'] as Record<string, unknown>)['name']), ['p5']);
    });
  });
});
