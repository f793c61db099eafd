import assert from 'node:assert/strict';
import { forEachStore } from '../helpers/stores.js';
import { startManagementApp, type ClientResponse, type ManagementHarness } from '../helpers/management-app.js';

const issues = (res: ClientResponse): Array<{ path: string; message: string }> => res.body['issues'] as Array<{ path: string; message: string }>;

/** A 400 `invalid_argument` whose single issue names `path` and says what is wrong with it. */
function refused(res: ClientResponse, path: string, why: RegExp): void {
  assert.equal(res.status, 400, res.text);
  assert.equal(res.body['code'], 'invalid_argument', res.text);
  assert.equal(issues(res)[0]?.path, path, res.text);
  assert.match(issues(res)[0]!.message, why);
  assert.match(String(res.body['message']), why);
}

const nul = /U\+0000/;
const surrogate = /well-formed Unicode/;

/**
 * PostgreSQL cannot store U+0000 (text and jsonb) nor a lone UTF-16 surrogate (jsonb), and
 * answered such requests with 500 (issue 12: 417 of 38k fuzzed requests). Every string of a
 * body, path or query must be refused where it enters, with a 400 naming the field, on the
 * real store; nothing may be stored.
 */
forEachStore('text PostgreSQL cannot store', (store) => {
  let h: ManagementHarness;
  before(async () => {
    h = await startManagementApp(store());
    assert.equal((await h.client().post('/v1/tenants', { clientId: 'acme', name: 'Acme' })).status, 201);
  });
  after(() => h.close());

  it('is refused in a JSON body, at any depth and in keys, naming the field', async () => {
    const op = h.client();
    refused(await op.post('/v1/tenants/acme/knowledge-documents', { name: 'faq', content: 'a\u0000b' }), 'content', nul);
    refused(await op.post('/v1/tenants/acme/pronunciation-entries', { word: 'to\u0000mato', pronunciation: 'tomato' }), 'word', nul);
    refused(
      await op.post('/v1/tenants/acme/business-hours', { name: 'office', timezone: 'Asia/Kolkata', hours: [{ day: 'monday', start: '09:00', end: '17\ud800' }] }),
      'hours[0].end',
      surrogate,
    );
    refused(await op.post('/v1/tenants/acme/knowledge-documents', { name: 'faq', content: 'x', ['bad\u0000key']: 1 }), 'bad\\u0000key', nul);
    refused(await op.post('/v1/tenants', { clientId: 'beta', name: 'Beta\udc00' }), 'name', surrogate);
    assert.equal((await op.get('/v1/tenants/acme/knowledge-documents')).body.items?.length, 0, 'nothing was stored');
  });

  it('is refused in a merge patch and a replace', async () => {
    const op = h.client();
    const created = await op.post('/v1/tenants/acme/knowledge-documents', { name: 'kept', content: 'plain' });
    assert.equal(created.status, 201, created.text);
    const item = `/v1/tenants/acme/knowledge-documents/${String(created.body['id'])}`;
    refused(await op.request('PATCH', item, { body: { content: 'x\u0000' }, contentType: 'application/merge-patch+json' }), 'content', nul);
    refused(await op.put(item, { name: 'kept', content: '\ud83d' }), 'content', surrogate);
    refused(await op.request('PATCH', '/v1/tenants/acme', { body: { settings: { webhookSecret: 's\u0000' } } }), 'settings.webhookSecret', nul);
    assert.equal((await op.get(item)).body['spec'] && ((await op.get(item)).body['spec'] as Record<string, unknown>)['content'], 'plain');
  });

  it('is refused in path parameters, naming the parameter', async () => {
    const op = h.client();
    refused(await op.get('/v1/tenants/a%00b'), 'clientId', nul);
    refused(await op.delete('/v1/tenants/%00'), 'clientId', nul);
    refused(await op.get('/v1/tenants/%00/recipes'), 'clientId', nul);
    refused(await op.get('/v1/tenants/acme/recipes/x%00'), 'id', nul);
    refused(await op.get('/v1/tenants/acme/tokens/%00'), 'tokenId', nul);
    refused(await op.get('/v1/tenants/acme/calls/%00'), 'id', nul);
    refused(await op.request('POST', '/v1/tenants/acme/simulations/%00/turns', { body: 'hello' }), 'id', nul);
  });

  it('is refused in query parameters, names and values, naming the parameter', async () => {
    const op = h.client();
    refused(await op.get('/v1/tenants/acme/calls?number=%2B91%00'), 'number', nul);
    refused(await op.get('/v1/tenants/acme/reports/master.csv?from=2026-01-01%00'), 'from', nul);
    refused(await op.get('/v1/tenants/acme/speech-profiles?language=en%00'), 'language', nul);
    refused(await op.get('/v1/tenants?cursor=%00'), 'cursor', nul);
    refused(await op.get('/v1/tenants/acme/recipes?na%00me=x'), 'na\\u0000me', nul);
    refused(await op.request('POST', '/v1/apply?dryRun=%00', { raw: '[]', contentType: 'application/json' }), 'dryRun', nul);
  });

  it('is refused in apply documents, JSON and YAML, naming the document and field', async () => {
    const op = h.client();
    const doc = { apiVersion: 'vap/v1', kind: 'KnowledgeDocument', tenant: 'acme', spec: { name: 'applied', content: 'a\u0000' } };
    refused(await op.post('/v1/apply', [doc]), 'documents[0].spec.content', nul);
    refused(await op.post('/v1/apply', { documents: [{ ...doc, spec: { name: 'applied\ud800', content: 'x' } }] }), 'documents[0].spec.name', surrogate);
    const yaml = 'apiVersion: vap/v1\nkind: KnowledgeDocument\ntenant: acme\nspec: {name: applied, content: "a\\0b"}\n';
    refused(await op.request('POST', '/v1/apply', { raw: yaml, contentType: 'application/yaml' }), 'documents[0].spec.content', nul);
    assert.equal((await op.get('/v1/tenants/acme/knowledge-documents?name=applied')).body.items?.length, 0);
  });

  it('refuses bodies nested deeper than 64 levels instead of overflowing the stack', async () => {
    const op = h.client();
    const deep = `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`;
    const patched = await op.request('PATCH', '/v1/tenants/acme', { raw: `{"settings":${deep}}`, contentType: 'application/merge-patch+json' });
    assert.equal(patched.status, 400, patched.text);
    assert.match(String(patched.body['message']), /deeper than 64 levels/);
    const yaml = `apiVersion: vap/v1\nkind: KnowledgeDocument\ntenant: acme\nspec: ${'['.repeat(200_000)}${']'.repeat(200_000)}\n`;
    const started = process.hrtime.bigint();
    const applied = await op.request('POST', '/v1/apply', { raw: yaml, contentType: 'application/yaml' });
    assert.equal(applied.status, 400, applied.text);
    assert.match(String(applied.body['message']), /deeper than 64 levels/);
    assert.ok(Number(process.hrtime.bigint() - started) / 1e6 < 2_000, 'refused before the YAML parser spends seconds on it');
  });
});
