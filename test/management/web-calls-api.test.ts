import assert from 'node:assert/strict';
import { callTokenKey, verifyCallToken } from '../../control-api/platform/crypto/call-token.js';
import { forEachStore } from '../helpers/stores.js';
import { secretKey, startManagementApp, type ManagementHarness } from '../helpers/management-app.js';
import { recipeDoc } from '../helpers/resource-documents.js';

forEachStore('dashboard support routes: GET /v1/whoami, GET .../endpoints, POST .../web-calls', (store) => {
  let h: ManagementHarness;
  let acme = '';
  let other = '';

  before(async () => {
    h = await startManagementApp(store(), {}, { config: { sip: { publicAddress: '203.0.113.10', wssPort: 5063 }, webCalls: { tokenTtlSeconds: 90 } } });
    const op = h.client();
    assert.equal((await op.post('/v1/tenants', { clientId: 'acme', name: 'Acme' })).status, 201);
    assert.equal((await op.post('/v1/tenants', { clientId: 'other', name: 'Other' })).status, 201);
    acme = String((await op.post('/v1/tenants/acme/tokens', { name: 'dash', scopes: ['management'] })).body['token']);
    other = String((await op.post('/v1/tenants/other/tokens', { name: 'dash', scopes: ['management'] })).body['token']);
    assert.equal((await op.post('/v1/tenants/acme/recipes', recipeDoc('Flow'))).status, 201);
    assert.equal((await op.post('/v1/tenants/acme/phone-numbers', { number: '+914440001001', recipe: 'Flow', provider: { type: 'nativeStack' } })).status, 201);
  });
  after(() => h.close());

  it('whoami tells the operator from a tenant token, and names the tenant', async () => {
    assert.deepEqual((await h.client().get('/v1/whoami')).body, { kind: 'operator' });
    const me = await h.client(acme).get('/v1/whoami');
    assert.equal(me.status, 200);
    assert.equal(me.body['kind'], 'tenant');
    assert.equal(me.body['clientId'], 'acme');
    assert.equal(me.headers.get('cache-control'), 'no-store');
    assert.equal((await h.client('nope-nope-nope-nope').get('/v1/whoami')).status, 401);
    assert.equal((await h.client('').get('/v1/whoami')).status, 401);
  });

  it('endpoints give the tenant\'s SendMessage URL on the port the request came to', async () => {
    const res = await h.client(acme).get('/v1/tenants/acme/endpoints');
    assert.equal(res.status, 200);
    assert.equal(res.body['sendMessageUrl'], `http://acme.localhost:${h.server.port}/api/v1/Campaign/SendMessage`);
    assert.equal((await h.client(acme).get('/v1/tenants/other/endpoints')).status, 404);
  });

  it('issues a one-call token for a recipe or a number, bound to the tenant and target, not cached', async () => {
    const recipe = await h.client(acme).post('/v1/tenants/acme/web-calls', { recipe: 'Flow' });
    assert.equal(recipe.status, 201);
    assert.equal(recipe.headers.get('cache-control'), 'no-store');
    assert.match(String(recipe.body['sipUri']), /^sip:recipe-[0-9a-f-]{36}@203\.0\.113\.10$/);
    assert.equal(recipe.body['websocketUrl'], 'wss://203.0.113.10:5063');
    const check = verifyCallToken(callTokenKey(secretKey), String(recipe.body['token']), Date.now());
    assert.ok(check.ok);
    assert.equal(check.claims.target.kind, 'recipe');
    const ttl = Date.parse(String(recipe.body['expiresAt'])) - Date.now();
    assert.ok(ttl > 80_000 && ttl <= 90_000, `ttl ${ttl}`);

    const number = await h.client(acme).post('/v1/tenants/acme/web-calls', { phoneNumber: '914440001001' });
    assert.equal(number.status, 201);
    assert.equal(number.body['sipUri'], 'sip:+914440001001@203.0.113.10');
  });

  it('answers precise errors: 400 naming the field, 404 for what the tenant does not have, 401', async () => {
    const both = await h.client(acme).post('/v1/tenants/acme/web-calls', { recipe: 'Flow', phoneNumber: '+914440001001' });
    assert.equal(both.status, 400);
    assert.deepEqual((both.body['issues'] as Array<{ path: string }>).map((i) => i.path), ['recipe']);
    const neither = await h.client(acme).post('/v1/tenants/acme/web-calls', {});
    assert.equal(neither.status, 400);
    const unknown = await h.client(acme).request('POST', '/v1/tenants/acme/web-calls', { body: { recipe: 'Flow', target: 'x' }, unchecked: true });
    assert.equal(unknown.status, 400);
    assert.equal((await h.client(acme).post('/v1/tenants/acme/web-calls', { recipe: 'Flow', language: 'english' })).status, 400);
    assert.equal((await h.client(acme).post('/v1/tenants/acme/web-calls', { recipe: 'Missing' })).status, 404);
    assert.equal((await h.client(acme).post('/v1/tenants/acme/web-calls', { phoneNumber: '+919999999999' })).status, 404);
    // Another tenant's recipe is as missing as one that does not exist.
    assert.equal((await h.client(other).post('/v1/tenants/other/web-calls', { recipe: 'Flow' })).status, 404);
    assert.equal((await h.client(other).post('/v1/tenants/acme/web-calls', { recipe: 'Flow' })).status, 404);
    assert.equal((await h.client('').post('/v1/tenants/acme/web-calls', { recipe: 'Flow' })).status, 401);
  });
});
