import assert from 'node:assert/strict';
import { forEachStore } from '../helpers/stores.js';
import { startManagementApp, type ClientResponse, type ManagementHarness } from '../helpers/management-app.js';
import { builtInSpeechProfiles } from '../../control-api/model/domain/builtin-speech-profiles.js';
import { findSpeechProfileByName } from '../../control-api/model/resources/definitions/lookups.js';

const hindiFemale = 'Hindi Female (espeak-ng)';
const recipe = {
  name: 'hello',
  startBlockId: 'greet',
  blocks: [
    { id: 'greet', type: 'message', settings: { text: 'Namaste' } },
    { id: 'bye', type: 'close', settings: {} },
  ],
  connections: [{ from: 'greet', exit: 'next', to: 'bye' }],
};

type Item = Record<string, unknown> & { spec: Record<string, unknown> };

forEachStore('built-in speech profiles (spec: only custom-added profiles can be edited or deleted)', (store) => {
  let h: ManagementHarness;
  let tokenA = '';
  let tokenB = '';
  const base = (clientId: string) => `/v1/tenants/${clientId}/speech-profiles`;
  const listAll = async (clientId: string, token: string, query = ''): Promise<Item[]> => {
    const items: Item[] = [];
    let cursor: string | undefined;
    do {
      const res = await h.client(token).get(`${base(clientId)}?limit=7${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      assert.equal(res.status, 200, res.text);
      items.push(...((res.body.items ?? []) as Item[]));
      cursor = res.body['nextCursor'] as string | undefined;
    } while (cursor);
    return items;
  };
  const byName = async (clientId: string, token: string, name: string): Promise<Item> => {
    const found = (await listAll(clientId, token)).find((i) => i.spec['name'] === name);
    assert.ok(found, name);
    return found;
  };
  const refused = (res: ClientResponse, pattern: RegExp) => {
    assert.equal(res.status, 403, res.text);
    assert.equal(res.body['code'], 'permission_denied');
    assert.match(String(res.body['message']), pattern);
  };

  before(async () => {
    h = await startManagementApp(store());
    const op = h.client();
    for (const clientId of ['acme', 'other']) assert.equal((await op.post('/v1/tenants', { clientId, name: clientId })).status, 201);
    tokenA = String((await op.post('/v1/tenants/acme/tokens', { name: 't', scopes: ['management'] })).body['token']);
    tokenB = String((await op.post('/v1/tenants/other/tokens', { name: 't', scopes: ['management'] })).body['token']);
    const own = await h.client(tokenA).post(base('acme'), { name: 'asha', language: 'hi-IN', gender: 'female', provider: 'azure', voiceName: 'hi-IN-SwaraNeural' });
    assert.equal(own.status, 201, own.text);
  });
  after(() => h.close());

  it('lists the catalogue first (builtIn: true), then the tenant\'s own (builtIn: false), across pages', async () => {
    const items = await listAll('acme', tokenA);
    assert.deepEqual(items.map((i) => [i.spec['name'], i['builtIn']]), [...builtInSpeechProfiles.map((p) => [p.spec.name, true]), ['asha', false]]);
    assert.equal(new Set(items.map((i) => i['id'])).size, items.length, 'no item twice at page boundaries');
    const other = await listAll('other', tokenB);
    assert.deepEqual(other.map((i) => i.spec['name']), builtInSpeechProfiles.map((p) => p.spec.name), 'every tenant sees the catalogue, not others\' profiles');
    // A page that ends exactly with the catalogue points on only when custom profiles follow.
    const half = builtInSpeechProfiles.length / 2;
    const second = async (clientId: string, token: string) => {
      const first = await h.client(token).get(`${base(clientId)}?limit=${half}`);
      return h.client(token).get(`${base(clientId)}?limit=${half}&cursor=${encodeURIComponent(String(first.body['nextCursor']))}`);
    };
    const acmeSecond = await second('acme', tokenA);
    assert.equal(acmeSecond.body.items?.length, half);
    const third = await h.client(tokenA).get(`${base('acme')}?limit=${half}&cursor=${encodeURIComponent(String(acmeSecond.body['nextCursor']))}`);
    assert.deepEqual(third.body.items?.map((i) => (i['spec'] as Item['spec'])['name']), ['asha']);
    assert.equal((await second('other', tokenB)).body['nextCursor'], undefined, 'no empty last page');
    const one = await h.client(tokenA).get(`${base('acme')}/${String(items[0]?.['id'])}`);
    assert.deepEqual(one.body, items[0]);
  });

  it('filters built-ins like any profile: gender, language and accent, tags, builtIn', async () => {
    const names = async (query: string) => (await listAll('acme', tokenA, query)).map((i) => i.spec['name']);
    assert.deepEqual(await names('&gender=female&language=hi'), [hindiFemale, 'asha']);
    assert.deepEqual(await names('&gender=female&language=hi&builtIn=true'), [hindiFemale]);
    assert.deepEqual(await names('&language=en-IN&tags=Indian&tags=offline'), ['English India Male (espeak-ng)', 'English India Female (espeak-ng)']);
    assert.deepEqual(await names('&builtIn=false'), ['asha']);
  });

  it('refuses PUT, PATCH and DELETE on a built-in with 403 permission_denied, and it stays as it was', async () => {
    const hindi = await byName('acme', tokenA, hindiFemale);
    const item = `${base('acme')}/${String(hindi['id'])}`;
    refused(await h.client(tokenA).put(item, { ...hindi.spec, voiceName: 'hi+f5' }), /^built-in speech profile 'Hindi Female \(espeak-ng\)' cannot be edited: only its favourite star can change/);
    refused(await h.client(tokenA).request('PATCH', item, { body: { description: 'mine now' } }), /cannot be edited/);
    refused(await h.client().delete(item), /^built-in speech profile 'Hindi Female \(espeak-ng\)' cannot be deleted/);
    const after = await h.client(tokenA).get(item);
    assert.equal(after.status, 200);
    assert.deepEqual(after.body, hindi);
  });

  it('stars a built-in per tenant with PATCH {favourite} (or a PUT of the read-back spec)', async () => {
    const hindi = await byName('acme', tokenA, hindiFemale);
    const item = `${base('acme')}/${String(hindi['id'])}`;
    const starred = await h.client(tokenA).request('PATCH', item, { body: { favourite: true } });
    assert.equal(starred.status, 200, starred.text);
    assert.equal((starred.body['spec'] as Item['spec'])['favourite'], true);
    assert.equal(starred.body['builtIn'], true);
    assert.deepEqual((await listAll('acme', tokenA, '&favourite=true')).map((i) => i.spec['name']), [hindiFemale]);
    assert.equal((await byName('other', tokenB, hindiFemale)).spec['favourite'], false, 'another tenant\'s star is its own');
    const unstarred = await h.client(tokenA).put(item, { ...hindi.spec, favourite: false });
    assert.equal(unstarred.status, 200, unstarred.text);
    assert.deepEqual((await listAll('acme', tokenA, '&favourite=true')).map((i) => i.spec['name']), []);
  });

  it('reserves built-in names: a custom profile cannot be created with one (409) or renamed to one', async () => {
    const clash = await h.client(tokenA).post(base('acme'), { name: hindiFemale, language: 'hi-IN', gender: 'female', provider: 'espeak-ng', voiceName: 'hi' });
    assert.equal(clash.status, 409, clash.text);
    assert.equal(clash.body['code'], 'already_exists');
    assert.match(String(clash.body['message']), /already exists as a built-in profile/);
    const asha = await byName('acme', tokenA, 'asha');
    const rename = await h.client(tokenA).request('PATCH', `${base('acme')}/${String(asha['id'])}`, { body: { name: hindiFemale } });
    assert.equal(rename.status, 409, rename.text);
  });

  it('is usable by name from a number\'s voice and a pronunciation entry, and resolves at call time', async () => {
    const c = h.client(tokenA);
    assert.equal((await c.post('/v1/tenants/acme/recipes', recipe)).status, 201);
    const word = await c.post('/v1/tenants/acme/pronunciation-entries', { word: 'Acme', pronunciation: 'ak-mee', speechProfiles: [hindiFemale, 'asha'] });
    assert.equal(word.status, 201, word.text);
    const number = await c.post('/v1/tenants/acme/phone-numbers', { number: '+914440007123', recipe: 'hello', provider: { type: 'nativeStack' }, voice: hindiFemale, pronunciationWords: ['Acme'] });
    assert.equal(number.status, 201, number.text);
    const dangling = await c.post('/v1/tenants/acme/phone-numbers', { number: '+914440007124', recipe: 'hello', provider: { type: 'nativeStack' }, voice: 'Hindi Robot (espeak-ng)' });
    assert.equal(dangling.status, 400);
    assert.deepEqual((dangling.body['issues'] as { path: string }[]).map((i) => i.path), ['voice']);

    const tenantId = (await store().db.selectFrom('tenants').select('id').where('client_id', '=', 'acme').executeTakeFirstOrThrow()).id;
    const resolved = await findSpeechProfileByName(store().db, tenantId, hindiFemale);
    assert.deepEqual(resolved, { name: hindiFemale, spec: builtInSpeechProfiles.find((p) => p.spec.name === hindiFemale)?.spec });
    assert.equal((await findSpeechProfileByName(store().db, tenantId, 'asha'))?.spec.provider, 'azure');
    assert.equal(await findSpeechProfileByName(store().db, tenantId, 'nobody'), undefined);
  });

  it('apply: a built-in named in a document is unchanged when it matches, starred by favourite, refused otherwise', async () => {
    const spec = { ...builtInSpeechProfiles[0]!.spec, favourite: true };
    const doc = (s: object) => ({ apiVersion: 'vap/v1', kind: 'SpeechProfile', tenant: 'other', spec: s });
    const star = await h.client(tokenB).post('/v1/apply', doc(spec));
    assert.equal(star.status, 200, star.text);
    assert.deepEqual(star.body['summary'], { created: 0, updated: 1, unchanged: 0 });
    const again = await h.client(tokenB).post('/v1/apply', doc(spec));
    assert.deepEqual(again.body['summary'], { created: 0, updated: 0, unchanged: 1 });
    const edit = await h.client(tokenB).post('/v1/apply', doc({ ...spec, voiceName: 'en-us+m7' }));
    refused(edit, /cannot be edited/);
    const tenantId = (await store().db.selectFrom('tenants').select('id').where('client_id', '=', 'other').executeTakeFirstOrThrow()).id;
    const stars = () => store().db.selectFrom('speech_profile_favourites').select('profile_id').where('tenant_id', '=', tenantId).execute();
    assert.equal((await stars()).length, 1);
    assert.equal((await h.client().delete('/v1/tenants/other')).status, 204);
    assert.deepEqual(await stars(), [], 'a deleted tenant\'s stars go with it');
  });

  it('answers 400 for a catalogue cursor past its end', async () => {
    const bad = await h.client(tokenA).get(`${base('acme')}?cursor=${Buffer.from(JSON.stringify({ b: 999 })).toString('base64url')}`);
    assert.equal(bad.status, 400);
    assert.deepEqual((bad.body['issues'] as { path: string }[]).map((i) => i.path), ['cursor']);
  });
});
