import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { forEachStore } from '../helpers/stores.js';
import { startManagementApp, type ManagementHarness, type ClientResponse } from '../helpers/management-app.js';

const exampleDir = path.resolve(import.meta.dirname, '../../examples/tenant');
const exampleFiles = readdirSync(exampleDir).filter((f) => f.endsWith('.yaml')).sort();
/** The whole example tenant as one multi-document YAML stream, as a git repository would post it. */
const exampleYaml = exampleFiles.map((f) => readFileSync(path.join(exampleDir, f), 'utf8')).join('\n---\n');

interface Doc {
  kind: string;
  tenant?: string;
  spec: Record<string, unknown>;
}
const exampleDocs = exampleFiles.flatMap((f) => parseAllDocuments(readFileSync(path.join(exampleDir, f), 'utf8')).map((d) => d.toJS() as Doc)).filter(Boolean);

/** A second resource of each kind: a new natural key and nothing that is unique platform-wide. */
const copies: Readonly<Record<string, (spec: Record<string, unknown>) => Record<string, unknown>>> = {
  BusinessHours: (s) => ({ ...s, name: 'copy' }),
  SipTrunk: (s) => ({ ...s, name: 'copy', inbound: { terminationAddresses: ['127.0.0.21'] } }),
  AuthProfile: (s) => ({ ...s, name: 'copy' }),
  SpeechProfile: (s) => ({ ...s, name: 'copy' }),
  PronunciationEntry: (s) => ({ ...s, word: 'copy' }),
  KnowledgeDocument: (s) => ({ ...s, name: 'copy' }),
  Recipe: (s) => ({ ...s, name: 'copy' }),
  PhoneNumber: (s) => ({ ...s, number: '+914440009999' }),
  Campaign: (s) => ({ ...s, name: 'copy' }),
};

const pluralOf = (h: ManagementHarness, kind: string): string => {
  const paths = Object.keys(h.document.paths ?? {});
  const entry = Object.entries(h.document.paths ?? {}).find(([, ops]) => (ops['post'] as { operationId?: string } | undefined)?.operationId === `create${kind}`);
  assert.ok(entry, `no create operation for ${kind} in ${paths.join(', ')}`);
  return entry[0].split('/').pop()!;
};

forEachStore('the platform resource kinds through the management API', (store) => {
  let h: ManagementHarness;
  const apply = (query = ''): Promise<ClientResponse> => h.client().request('POST', `/v1/apply${query}`, { raw: exampleYaml, contentType: 'application/yaml' });

  before(async () => {
    h = await startManagementApp(store());
  });
  after(() => h.close());

  it('the example tenant uses every resource kind', () => {
    const kinds = new Set(exampleDocs.map((d) => d.kind));
    for (const kind of ['Tenant', ...Object.keys(copies)]) assert.ok(kinds.has(kind), `examples/tenant has no ${kind}`);
    // Resource kinds are the paths with a full CRUD set; calls and simulations have items too, but no PUT.
    const crud = Object.entries(h.document.paths ?? {}).filter(([p, ops]) => p.endsWith('/{id}') && 'put' in ops);
    assert.equal(crud.length, Object.keys(copies).length);
  });

  it('applies examples/tenant: dry run writes nothing, the second apply reports no change', async () => {
    const dry = await apply('?dryRun=true');
    assert.equal(dry.status, 200, dry.text);
    assert.equal((dry.body['summary'] as Record<string, number>)['created'], exampleDocs.length);
    assert.equal((await h.client().get('/v1/tenants/greenleaf')).status, 404);

    const first = await apply();
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(first.body['summary'], { created: exampleDocs.length, updated: 0, unchanged: 0 });
    const second = await apply();
    assert.equal(second.body['changed'], false);
    assert.deepEqual(second.body['summary'], { created: 0, updated: 0, unchanged: exampleDocs.length });
  });

  it('serves CRUD for every kind; a read-back spec replaces to the same and re-applies unchanged', async () => {
    const op = h.client();
    for (const [kind, copy] of Object.entries(copies)) {
      const plural = pluralOf(h, kind);
      const base = `/v1/tenants/greenleaf/${plural}`;
      const list = await op.get(`${base}?limit=200`);
      assert.equal(list.status, 200, `${kind} list`);
      const expected = exampleDocs.filter((d) => d.kind === kind).length;
      // Speech profiles list the platform's built-ins too; the example's are the tenant's own.
      const own = list.body.items!.filter((i) => i['builtIn'] !== true);
      assert.equal(own.length, expected, `${kind} count`);
      const first = own[0]!;
      const one = await op.get(`${base}/${String(first['id'])}`);
      assert.deepEqual(one.body, first, `${kind} get`);
      const replaced = await op.put(`${base}/${String(first['id'])}`, first['spec']);
      assert.equal(replaced.status, 200, `${kind} put: ${replaced.text}`);
      assert.deepEqual(replaced.body['spec'], first['spec'], `${kind} put keeps the spec`);

      const source = exampleDocs.find((d) => d.kind === kind)!.spec;
      const created = await op.post(base, copy(source));
      assert.equal(created.status, 201, `${kind} create: ${created.text}`);
      assert.equal((await op.delete(`${base}/${String(created.body['id'])}`)).status, 204, `${kind} delete`);
      assert.equal((await op.get(`${base}/${String(created.body['id'])}`)).status, 404);
    }
    const again = await apply();
    assert.equal(again.body['changed'], false, 'replacing with read-back specs changed nothing');
  });

  it('never returns a secret, in clear or sealed', async () => {
    const op = h.client();
    for (const plural of ['sip-trunks', 'auth-profiles']) {
      const res = await op.get(`/v1/tenants/greenleaf/${plural}`);
      assert.ok(!res.text.includes('change-me'), plural);
      assert.match(res.text, /\*{8}/);
    }
  });

  it('refuses to delete a recipe a phone number or campaign uses, naming them (412)', async () => {
    const op = h.client();
    const recipes = (await op.get('/v1/tenants/greenleaf/recipes')).body.items!;
    const reminder = recipes.find((r) => (r['spec'] as Record<string, unknown>)['name'] === 'delivery-reminder')!;
    const refused = await op.delete(`/v1/tenants/greenleaf/recipes/${String(reminder['id'])}`);
    assert.equal(refused.status, 412);
    assert.equal(refused.body['code'], 'failed_precondition');
    assert.match(String(refused.body['message']), /\+914440001001/);
    assert.match(String(refused.body['message']), /delivery-reminders/);
    assert.equal((await op.get(`/v1/tenants/greenleaf/recipes/${String(reminder['id'])}`)).status, 200);
  });

  it('filters speech profiles by gender, language, tags and favourite', async () => {
    const names = async (query: string): Promise<string[]> =>
      (await h.client().get(`/v1/tenants/greenleaf/speech-profiles?${query}&builtIn=false`)).body.items!.map((i) => String((i['spec'] as Record<string, unknown>)['name']));
    assert.deepEqual(await names('gender=female'), ['asha-hindi']);
    assert.deepEqual(await names('language=ar-AE'), ['omar-arabic']);
    assert.deepEqual(await names('tags=indian&tags=Multi-lingual'), ['asha-hindi']);
    assert.deepEqual(await names('favourite=true'), ['asha-hindi']);
    assert.deepEqual(await names('gender=male&favourite=true'), []);
  });

  it('filters phone numbers by number and campaigns by phone number (the stored E.164 form)', async () => {
    const numbers = await h.client().get(`/v1/tenants/greenleaf/phone-numbers?number=${encodeURIComponent('+914440001001')}`);
    assert.equal(numbers.status, 200, numbers.text);
    assert.deepEqual(numbers.body.items!.map((i) => (i['spec'] as Record<string, unknown>)['number']), ['+914440001001']);
    const campaigns = await h.client().get(`/v1/tenants/greenleaf/campaigns?phoneNumber=${encodeURIComponent('+914440001001')}`);
    assert.equal(campaigns.status, 200, campaigns.text);
    assert.ok(campaigns.body.items!.length >= 1);
    assert.ok(campaigns.body.items!.every((i) => (i['spec'] as Record<string, unknown>)['phoneNumber'] === '+914440001001'));
    const none = await h.client().get(`/v1/tenants/greenleaf/campaigns?phoneNumber=${encodeURIComponent('+914440009999')}`);
    assert.deepEqual(none.body.items, []);
  });

  it("keeps another tenant's token out of this tenant's resources", async () => {
    const op = h.client();
    await op.post('/v1/tenants', { clientId: 'intruder', name: 'Intruder' });
    const token = String((await op.post('/v1/tenants/intruder/tokens', { name: 'x', scopes: ['management'] })).body['token']);
    const intruder = h.client(token);
    const recipe = (await op.get('/v1/tenants/greenleaf/recipes')).body.items![0]!;
    for (const [kind] of Object.entries(copies)) {
      assert.equal((await intruder.get(`/v1/tenants/greenleaf/${pluralOf(h, kind)}`)).status, 404, kind);
    }
    assert.equal((await intruder.get(`/v1/tenants/intruder/recipes/${String(recipe['id'])}`)).status, 404);
    assert.equal((await intruder.delete(`/v1/tenants/intruder/recipes/${String(recipe['id'])}`)).status, 404);
    assert.deepEqual((await intruder.get('/v1/tenants/intruder/recipes')).body.items, []);
  });

  it('answers every malformed create or replace with a 4xx, never a 500', async () => {
    const op = h.client();
    const junk: unknown[] = [
      {},
      { name: 42 },
      { name: null, number: {}, recipe: [], provider: 'x', blocks: 'none' },
      { name: 'x'.repeat(10_000) },
      { name: 'ok', provider: { type: 'providerB' }, inbound: { terminationAddresses: ['not a host!'] }, hours: [{ day: 'someday' }] },
      { name: 'ok', number: '+1', startBlockId: '../../etc', blocks: [{ id: 'a', type: 'code', settings: { source: 'x' } }] },
      { name: 'ok', nested: { deeper: { deepest: [[[[null]]]] } }, expressiveness: 1e308, maxRetries: -1 },
      { __proto__: { polluted: true }, constructor: { prototype: { polluted: true } } },
    ];
    for (const kind of Object.keys(copies)) {
      const base = `/v1/tenants/greenleaf/${pluralOf(h, kind)}`;
      const existing = (await op.get(base)).body.items![0]!;
      for (const body of junk) {
        const created = await op.post(base, body);
        assert.ok(created.status >= 400 && created.status < 500, `${kind} POST ${JSON.stringify(body).slice(0, 80)} -> ${created.status} ${created.text}`);
        const replaced = await op.put(`${base}/${String(existing['id'])}`, body);
        assert.ok(replaced.status >= 400 && replaced.status < 500, `${kind} PUT -> ${replaced.status} ${replaced.text}`);
      }
    }
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
    const again = await apply();
    assert.equal(again.body['changed'], false, 'the failed writes changed nothing');
  });
});
