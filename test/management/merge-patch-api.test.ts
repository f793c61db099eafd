import assert from 'node:assert/strict';
import { forEachStore } from '../helpers/stores.js';
import { startManagementApp, type ManagementHarness } from '../helpers/management-app.js';

const recipe = {
  name: 'greeter',
  startBlockId: 'hello',
  blocks: [
    { id: 'hello', type: 'message', settings: { text: 'Hello' } },
    { id: 'bye', type: 'close', settings: {} },
  ],
  connections: [{ from: 'hello', exit: 'next', to: 'bye' }],
};

forEachStore('management API PATCH (JSON Merge Patch)', (store) => {
  let h: ManagementHarness;
  let numberPath: string;
  before(async () => {
    h = await startManagementApp(store());
    const op = h.client();
    assert.equal((await op.post('/v1/tenants', { clientId: 'acme', name: 'Acme' })).status, 201);
    assert.equal((await op.post('/v1/tenants/acme/recipes', recipe)).status, 201);
    const number = await op.post('/v1/tenants/acme/phone-numbers', {
      number: '+914440001001', recipe: 'greeter', provider: { type: 'providerA', accountSid: 'AC1', authToken: 'secret-token-1' }, boostedKeywords: ['Monstera'],
    });
    assert.equal(number.status, 201, number.text);
    numberPath = `/v1/tenants/acme/phone-numbers/${String(number.body['id'])}`;
  });
  after(() => h.close());

  it('toggles one field, keeping every other field and the stored secret', async () => {
    const res = await h.client().request('PATCH', numberPath, { body: { enabled: false }, contentType: 'application/merge-patch+json' });
    assert.equal(res.status, 200, res.text);
    const spec = res.body['spec'] as Record<string, unknown>;
    assert.equal(spec['enabled'], false);
    assert.deepEqual(spec['boostedKeywords'], ['Monstera']);
    assert.deepEqual(spec['provider'], { type: 'providerA', accountSid: 'AC1', authToken: '********' });
    const read = await h.client().get(numberPath);
    assert.equal((read.body['spec'] as Record<string, unknown>)['enabled'], false);
    const row = await store().db.selectFrom('phone_numbers').select(['enabled', 'spec']).where('e164', '=', '+914440001001').executeTakeFirstOrThrow();
    assert.equal(row.enabled, false, 'the queried column follows the patch');
    assert.match(JSON.stringify(row.spec), /vap1\./, 'the sealed secret is still stored');
  });

  it('merges nested objects, replaces arrays and removes a field with null', async () => {
    const res = await h.client().request('PATCH', numberPath, { body: { provider: { accountSid: 'AC2' }, boostedKeywords: ['Fern'], endCallOnSilenceMinutes: null } });
    assert.equal(res.status, 200, res.text);
    const spec = res.body['spec'] as Record<string, unknown>;
    assert.deepEqual(spec['provider'], { type: 'providerA', accountSid: 'AC2', authToken: '********' });
    assert.deepEqual(spec['boostedKeywords'], ['Fern']);
    assert.equal(spec['endCallOnSilenceMinutes'], 2, 'a removed field takes its default again');
  });

  it('patches a tenant: one setting changes, the webhook secret and the rest stay', async () => {
    const op = h.client();
    const put = await op.put('/v1/tenants/acme', {
      name: 'Acme', timezone: 'Asia/Kolkata', settings: { webhookUrl: 'https://hooks.example.com/a', webhookSecret: 'whsec-0123456789abcdef', ssrfAllowlist: ['127.0.0.1'] },
    });
    assert.equal(put.status, 200, put.text);
    const res = await op.request('PATCH', '/v1/tenants/acme', { body: { settings: { webhookUrl: 'https://hooks.example.com/b' } } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body['spec'], {
      clientId: 'acme', name: 'Acme', timezone: 'Asia/Kolkata',
      settings: { webhookUrl: 'https://hooks.example.com/b', webhookSecret: '********', ssrfAllowlist: ['127.0.0.1'] },
    });
    const row = await store().db.selectFrom('tenants').select(['settings']).where('client_id', '=', 'acme').executeTakeFirstOrThrow();
    assert.match(JSON.stringify(row.settings), /vap1\./, 'the sealed webhook secret is kept');
    const rename = await op.request('PATCH', '/v1/tenants/acme', { body: { clientId: 'other' } });
    assert.equal(rename.status, 400);
    assert.deepEqual(rename.body['issues'], [{ path: 'clientId', message: 'clientId cannot change' }]);
  });

  it('removes a tenant secret patched to null (directly or with its parent), and keeps the others', async () => {
    const op = h.client();
    const put = await op.put('/v1/tenants/acme', {
      name: 'Acme', timezone: 'Asia/Kolkata',
      settings: { webhookSecret: 'whsec-0123456789abcdef', ssrfAllowlist: [], llm: { provider: 'openaiCompatible', baseUrl: 'https://llm.example.com/v1', model: 'm', apiKey: 'sk-0001' } },
    });
    assert.equal(put.status, 200, put.text);
    const cleared = await op.request('PATCH', '/v1/tenants/acme', { body: { settings: { webhookSecret: null } } });
    assert.equal(cleared.status, 200, cleared.text);
    const settings = (cleared.body['spec'] as { settings: Record<string, unknown> }).settings;
    assert.equal(settings['webhookSecret'], undefined);
    assert.equal((settings['llm'] as { apiKey: string }).apiKey, '********', 'the LLM key stays');
    const withParent = await op.request('PATCH', '/v1/tenants/acme', { body: { settings: { llm: null } } });
    assert.equal(withParent.status, 200, withParent.text);
    const restored = await op.request('PATCH', '/v1/tenants/acme', { body: { settings: { llm: { provider: 'openaiCompatible', baseUrl: 'https://llm.example.com/v1', model: 'm' } } } });
    assert.equal(restored.status, 200, restored.text);
    assert.equal(((restored.body['spec'] as { settings: { llm: Record<string, unknown> } }).settings.llm)['apiKey'], undefined, 'a removed key does not come back with its parent');
    const row = await store().db.selectFrom('tenants').select(['settings']).where('client_id', '=', 'acme').executeTakeFirstOrThrow();
    assert.doesNotMatch(JSON.stringify(row.settings), /vap1\./, 'no sealed secret is left');
  });

  it('validates the merged spec like a PUT: bounds, unknown fields, non-object patches', async () => {
    const op = h.client();
    const bound = await op.request('PATCH', numberPath, { body: { maxCallDurationMinutes: 31 } });
    assert.equal(bound.status, 400);
    assert.deepEqual((bound.body['issues'] as Array<{ path: string }>).map((i) => i.path), ['maxCallDurationMinutes']);
    const unknown = await op.request('PATCH', numberPath, { body: { status: 'off' } });
    assert.equal(unknown.status, 400);
    assert.deepEqual((unknown.body['issues'] as Array<{ path: string }>).map((i) => i.path), ['status']);
    const switched = await op.request('PATCH', numberPath, {
      body: { provider: { type: 'providerB', apiKey: 'k', apiToken: 't', outboundAppId: 'app', subDomain: 'acme' } },
    });
    assert.equal(switched.status, 400, 'the stored providerA token is still in the merged provider');
    assert.deepEqual(switched.body['issues'], [{ path: 'provider.authToken', message: "provider.authToken is not a known field for type 'providerB' (check its spelling)" }]);
    const list = await op.request('PATCH', numberPath, { body: [{ op: 'replace', path: '/enabled', value: true }] });
    assert.equal(list.status, 400);
    assert.match(String(list.body['message']), /merge patch must be a JSON object/);
    const missing = await op.request('PATCH', '/v1/tenants/acme/phone-numbers/00000000-0000-4000-8000-000000000000', { body: { enabled: true } });
    assert.equal(missing.status, 404);
  });

  it('types each PATCH body in the OpenAPI document: the bodies above fit, misspelt or mistyped fields and removing a required one do not', () => {
    const number = '#/components/schemas/PhoneNumberPatch';
    for (const body of [{ enabled: false }, { provider: { accountSid: 'AC2' }, boostedKeywords: ['Fern'], endCallOnSilenceMinutes: null }, { maxCallDurationMinutes: 20 }, {}]) {
      h.validator.assertSchema(number, body);
    }
    for (const body of [{ status: 'off' }, { enabled: 'no' }, { number: null }, { boostedKeywords: 'Fern' }, { provider: { accountSid: 'AC2', region: 'x' } }]) {
      assert.throws(() => h.validator.assertSchema(number, body), JSON.stringify(body));
    }
    const tenant = '#/components/schemas/TenantPatch';
    h.validator.assertSchema(tenant, { settings: { webhookUrl: 'https://hooks.example.com/b' } });
    h.validator.assertSchema(tenant, { settings: { webhookSecret: null } });
    assert.throws(() => h.validator.assertSchema(tenant, { name: null }), 'a tenant needs its name');
    assert.throws(() => h.validator.assertSchema(tenant, { settings: { webhookUrll: 'x' } }));
    const patch = (h.document.paths?.['/v1/tenants/{clientId}/phone-numbers/{id}']?.['patch'] ?? {}) as { requestBody?: { content?: Record<string, { schema: unknown }> } };
    assert.deepEqual(Object.keys(patch.requestBody?.content ?? {}), ['application/merge-patch+json', 'application/json']);
    assert.deepEqual(patch.requestBody?.content?.['application/merge-patch+json']?.schema, { $ref: number });
  });
});
