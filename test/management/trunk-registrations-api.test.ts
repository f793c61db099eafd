import assert from 'node:assert/strict';
import { StoreTrunkRegistrations } from '../../control-api/features/gateway-adapters/store-trunk-registrations.js';
import { createSecretBox } from '../../control-api/platform/crypto/secret-box.js';
import { forEachStore } from '../helpers/stores.js';
import { secretKey, startManagementApp, type ManagementHarness } from '../helpers/management-app.js';

forEachStore('registering SIP trunks in the management API (spec registration, GET .../sip-trunk-registrations)', (store) => {
  let h: ManagementHarness;
  let tokenA = '';
  let trunkId = '';
  const trunk = {
    name: 'carrier-reg',
    inbound: { terminationAddresses: [], dids: ['+914440000021'] },
    outbound: { username: 'acme-reg', password: 'reg-secret-3' },
    registration: { registrar: 'sip.carrier.example', transport: 'tcp', expiresSeconds: 600 },
  };

  before(async () => {
    h = await startManagementApp(store());
    const op = h.client();
    assert.equal((await op.post('/v1/tenants', { clientId: 'acme', name: 'Acme' })).status, 201);
    assert.equal((await op.post('/v1/tenants', { clientId: 'other', name: 'Other' })).status, 201);
    tokenA = String((await op.post('/v1/tenants/acme/tokens', { name: 'ci', scopes: ['management'] })).body['token']);
  });
  after(() => h.close());

  it('takes a trunk that registers instead of listing termination addresses; the password stays write-only', async () => {
    const created = await h.client(tokenA).post('/v1/tenants/acme/sip-trunks', trunk);
    assert.equal(created.status, 201, created.text);
    trunkId = String(created.body['id']);
    const read = await h.client(tokenA).get(`/v1/tenants/acme/sip-trunks/${trunkId}`);
    const spec = read.body['spec'] as Record<string, Record<string, unknown>>;
    assert.deepEqual(spec['registration'], { registrar: 'sip.carrier.example', transport: 'tcp', expiresSeconds: 600 });
    assert.equal(spec['outbound']?.['password'], '********');
    const row = await store().db.selectFrom('sip_trunks').select('spec').where('name', '=', 'carrier-reg').executeTakeFirstOrThrow();
    assert.doesNotMatch(JSON.stringify(row.spec), /reg-secret-3/, 'sealed at rest');
  });

  it('refuses a registration without an address-of-record user, and a trunk with neither addresses nor registration', async () => {
    const noUser = await h.client(tokenA).post('/v1/tenants/acme/sip-trunks', { ...trunk, name: 'x', outbound: {} });
    assert.equal(noUser.status, 400);
    assert.match(noUser.text, /registration\.user is required when outbound\.username is not set/);
    const neither = await h.client(tokenA).post('/v1/tenants/acme/sip-trunks', { name: 'y', inbound: { terminationAddresses: [] } });
    assert.equal(neither.status, 400);
    assert.match(neither.text, /needs at least one IP address or FQDN unless the trunk registers/);
  });

  it('lists how each gateway node\'s registration stands, for the trunk\'s tenant only', async () => {
    const registrations = new StoreTrunkRegistrations({ db: store().db, secretBox: createSecretBox(secretKey), secretKey });
    const [listed] = await registrations.list();
    assert.ok(listed);
    assert.deepEqual({ ...listed, contactUser: 'x', revision: 'x', trunkId: 'x', tenantId: 'x' }, {
      trunkId: 'x', tenantId: 'x', name: 'carrier-reg', extension: null, srtp: 'off', registrar: 'sip.carrier.example', port: undefined, transport: 'tcp',
      domain: 'sip.carrier.example', user: 'acme-reg', expiresSeconds: 600, credentials: { username: 'acme-reg', password: 'reg-secret-3' }, contactUser: 'x', revision: 'x',
    });
    assert.match(listed.contactUser, /^r[0-9a-f]{24}$/);
    // After a restart (a new instance, the same platform key) the Contact is the same, so the new
    // REGISTER replaces the old binding (RFC 3261 sec. 10.3); another key gives another.
    const again = await new StoreTrunkRegistrations({ db: store().db, secretBox: createSecretBox(secretKey), secretKey }).list();
    assert.equal(again[0]?.contactUser, listed.contactUser);
    const otherKey = await new StoreTrunkRegistrations({ db: store().db, secretBox: createSecretBox(secretKey), secretKey: Buffer.alloc(32, 1) }).list();
    assert.notEqual(otherKey[0]?.contactUser, listed.contactUser);
    const expiresAt = new Date('2030-01-01T00:10:00Z');
    await registrations.report({ trunkId: listed.trunkId, tenantId: listed.tenantId, contact: 'sip:node-a', state: 'registered', expiresAt, retryAt: undefined, lastError: undefined });
    await registrations.report({ trunkId: listed.trunkId, tenantId: listed.tenantId, contact: 'sip:node-b', state: 'failed', expiresAt: undefined, retryAt: expiresAt, lastError: '403 Forbidden' });
    const res = await h.client(tokenA).get('/v1/tenants/acme/sip-trunk-registrations');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.items?.map((i) => [i['trunk'], i['contact'], i['state'], i['expiresAt'], i['lastError']]), [
      ['carrier-reg', 'sip:node-a', 'registered', '2030-01-01T00:10:00.000Z', null],
      ['carrier-reg', 'sip:node-b', 'failed', null, '403 Forbidden'],
    ]);
    assert.deepEqual((await h.client().get('/v1/tenants/other/sip-trunk-registrations')).body.items, []);
    assert.equal((await h.client(tokenA).get('/v1/tenants/other/sip-trunk-registrations')).status, 404);
    assert.equal((await h.client('').get('/v1/tenants/acme/sip-trunk-registrations')).status, 401);
  });

  it('a changed password changes the revision (the gateway registers again) without revealing it', async () => {
    const registrations = new StoreTrunkRegistrations({ db: store().db, secretBox: createSecretBox(secretKey), secretKey });
    const before = (await registrations.list())[0]?.revision;
    const put = await h.client(tokenA).put(`/v1/tenants/acme/sip-trunks/${trunkId}`, { ...trunk, outbound: { username: 'acme-reg', password: 'reg-secret-4' } });
    assert.equal(put.status, 200, put.text);
    const after = (await registrations.list())[0]?.revision;
    assert.notEqual(after, before);
    assert.doesNotMatch(String(after), /reg-secret/);
  });
});
