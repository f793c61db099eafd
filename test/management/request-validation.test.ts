import assert from 'node:assert/strict';
import { forEachStore } from '../helpers/stores.js';
import { startManagementApp, type ClientResponse, type ManagementHarness } from '../helpers/management-app.js';

const issues = (res: ClientResponse): Array<{ path: string; message: string }> => res.body['issues'] as Array<{ path: string; message: string }>;

const recipe = {
  name: 'greeter',
  startBlockId: 'hello',
  blocks: [
    { id: 'hello', type: 'message', settings: { text: 'Hello {{name}}' } },
    { id: 'bye', type: 'close', settings: { closingScript: 'Bye', disposition: 'done' } },
  ],
  connections: [{ from: 'hello', exit: 'next', to: 'bye' }],
};

/**
 * What a client writes is checked field by field: unknown fields are refused (never silently
 * dropped, which would keep a default the client meant to change), missing ones are "required",
 * and every issue path is written as the docs write it (`blocks[0].settings.x`).
 */
forEachStore('management API request validation', (store) => {
  let h: ManagementHarness;
  before(async () => {
    h = await startManagementApp(store());
    const op = h.client();
    assert.equal((await op.post('/v1/tenants', { clientId: 'acme', name: 'Acme' })).status, 201);
    assert.equal((await op.post('/v1/tenants/acme/recipes', recipe)).status, 201);
  });
  after(() => h.close());

  it('refuses unknown fields of a resource spec at any depth, naming each one', async () => {
    const op = h.client();
    const res = await op.post('/v1/tenants/acme/speech-profiles', {
      name: 'Asha', language: 'hi-IN', gender: 'female', provider: 'google', voiceName: 'hi-IN-A', favorite: true,
    });
    assert.equal(res.status, 400);
    assert.equal(res.body['code'], 'invalid_argument');
    assert.deepEqual(issues(res), [{ path: 'favorite', message: 'favorite is not a known field (check its spelling)' }]);
    assert.equal(res.body['message'], 'invalid SpeechProfile spec: favorite is not a known field (check its spelling)');

    const nested = await op.post('/v1/tenants/acme/recipes', {
      ...recipe, name: 'other', blocks: [{ ...recipe.blocks[0], settings: { text: 'Hi', bargeIn: false } }, recipe.blocks[1]],
    });
    assert.equal(nested.status, 400);
    assert.deepEqual(issues(nested).map((i) => i.path), ['blocks[0].settings.bargeIn']);

    const number = await op.post('/v1/tenants/acme/phone-numbers', {
      number: '+914440001001', recipe: 'greeter', provider: { type: 'nativeStack' }, endCallOnSilence: 3,
    });
    assert.equal(number.status, 400);
    assert.deepEqual(issues(number).map((i) => i.path), ['endCallOnSilence']);
    assert.equal((await op.get('/v1/tenants/acme/phone-numbers')).body.items?.length, 0, 'nothing was created');
  });

  it('refuses unknown fields on replace, of tenants and of token requests too', async () => {
    const op = h.client();
    const created = await op.post('/v1/tenants/acme/phone-numbers', { number: '+914440001002', recipe: 'greeter', provider: { type: 'nativeStack' } });
    assert.equal(created.status, 201, created.text);
    const spec = created.body['spec'] as Record<string, unknown>;
    const replaced = await op.put(`/v1/tenants/acme/phone-numbers/${String(created.body['id'])}`, { ...spec, status: 'disabled' });
    assert.equal(replaced.status, 400);
    assert.deepEqual(issues(replaced).map((i) => i.path), ['status']);
    const readBack = await op.put(`/v1/tenants/acme/phone-numbers/${String(created.body['id'])}`, spec);
    assert.equal(readBack.status, 200, 'a spec read back from GET replaces cleanly');

    const tenant = await op.post('/v1/tenants', { clientId: 'globex', name: 'Globex', timeZone: 'Asia/Kolkata' });
    assert.equal(tenant.status, 400);
    assert.deepEqual(issues(tenant).map((i) => i.path), ['timeZone']);
    const settings = await op.put('/v1/tenants/acme', { name: 'Acme', settings: { webhookURL: 'https://example.com/hook' } });
    assert.equal(settings.status, 400);
    assert.deepEqual(issues(settings).map((i) => i.path), ['settings.webhookURL']);
    const token = await op.post('/v1/tenants/acme/tokens', { name: 'ci', scopes: ['campaign'], expires: '2099-01-01T00:00:00Z' });
    assert.equal(token.status, 400);
    assert.deepEqual(issues(token).map((i) => i.path), ['expires']);
  });

  it('refuses unknown spec fields in apply documents with the document path', async () => {
    const res = await h.client().request('POST', '/v1/apply', {
      raw: 'apiVersion: vap/v1\nkind: PronunciationEntry\ntenant: acme\nspec: {word: Greenleaf, pronunciation: green leaf, casesensitive: true}\n',
      contentType: 'application/yaml',
    });
    assert.equal(res.status, 400);
    assert.deepEqual(issues(res), [{ path: 'documents[0].spec.casesensitive', message: 'casesensitive is not a known field (check its spelling)' }]);
  });

  it('says a missing field is required, with the field path', async () => {
    const op = h.client();
    const res = await op.post('/v1/tenants/acme/phone-numbers', {
      number: '+914440001003', recipe: 'greeter', provider: { type: 'providerB', accountSid: 'AC1', apiKey: 'k', apiToken: 't' },
    });
    assert.equal(res.status, 400);
    assert.deepEqual(issues(res), [
      { path: 'provider.outboundAppId', message: 'provider.outboundAppId is required' },
      { path: 'provider.subDomain', message: 'provider.subDomain is required' },
    ]);
    const token = await op.post('/v1/tenants/acme/tokens', { name: 'ci' });
    assert.deepEqual(issues(token), [{ path: 'scopes', message: 'scopes is required' }]);
    const body = await op.post('/v1/tenants/acme/recipes', []);
    assert.equal(body.status, 400);
    assert.equal(body.body['message'], 'invalid Recipe spec: Invalid input: expected object, received array', 'the kind is named once');
  });

  it('answers Location without a double slash when the collection is posted to with a trailing slash', async () => {
    const op = h.client();
    const profile = await op.request('POST', '/v1/tenants/acme/speech-profiles/', {
      body: { name: 'Ravi', language: 'en-IN', gender: 'male', provider: 'google', voiceName: 'en-IN-B' }, unchecked: true,
    });
    assert.equal(profile.status, 201);
    assert.equal(profile.headers.get('location'), `/v1/tenants/acme/speech-profiles/${String(profile.body['id'])}`);
    assert.equal((await op.get(profile.headers.get('location')!)).status, 200);
    const tenant = await op.request('POST', '/v1/tenants/', { body: { clientId: 'slash', name: 'Slash' }, unchecked: true });
    assert.equal(tenant.headers.get('location'), '/v1/tenants/slash');
    const token = await op.request('POST', '/v1/tenants/acme/tokens/', { body: { name: 'ci', scopes: ['sandbox'] }, unchecked: true });
    assert.equal(token.headers.get('location'), `/v1/tenants/acme/tokens/${String(token.body['id'])}`);
  });

  it('shows when a token was last used', async () => {
    const op = h.client();
    const issued = await op.post('/v1/tenants/acme/tokens', { name: 'gitops', scopes: ['management'] });
    const path = `/v1/tenants/acme/tokens/${String(issued.body['id'])}`;
    assert.equal((await op.get(path)).body['lastUsedAt'], null);
    assert.equal((await h.client(String(issued.body['token'])).get('/v1/tenants/acme/recipes')).status, 200);
    const used = (await op.get(path)).body['lastUsedAt'];
    assert.equal(typeof used, 'string');
    assert.ok(Math.abs(Date.parse(String(used)) - Date.now()) < 60_000);
  });

  it('writes reference issue paths with bracketed indexes, like schema issues', async () => {
    const res = await h.client().post('/v1/tenants/acme/phone-numbers', {
      number: '+914440001004', recipe: 'greeter', provider: { type: 'nativeStack' }, pronunciationWords: ['Nowhere'],
    });
    assert.equal(res.status, 400);
    assert.deepEqual(issues(res).map((i) => i.path), ['pronunciationWords[0]']);
  });
});
