import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { AppError } from '../../../core/errors.js';
import { forEachStore } from '../../../test/helpers/stores.js';
import { createSecretBox } from '../../platform/crypto/secret-box.js';
import { maskedSecret } from '../../platform/crypto/secret.js';
import { createTenantsRepository } from './tenants-repository.js';

const code = (expected: string, message: RegExp) => (error: unknown) => {
  assert.ok(error instanceof AppError);
  assert.equal(error.code, expected);
  assert.match(error.message, message);
  return true;
};

forEachStore('tenants repository', (store) => {
  const tenants = createTenantsRepository(createSecretBox(randomBytes(32)));
  const db = () => store().db;

  it('creates a tenant with its dashboard timezone and reads it by client ID and id', async () => {
    const created = await tenants.create(db(), { clientId: 'acme', name: 'Acme Plants', timezone: 'Asia/Kolkata', settings: { ssrfAllowlist: [] } });
    assert.equal(created.spec.timezone, 'Asia/Kolkata');
    assert.equal(created.tenantId, created.id);
    assert.equal((await tenants.findByClientId(db(), 'acme'))?.id, created.id);
    assert.equal((await tenants.get(db(), created.id))?.spec.name, 'Acme Plants');
    assert.equal(await tenants.get(db(), 'not-a-uuid'), undefined);
  });

  it('rejects a client ID that is not a subdomain label, a non-IANA timezone and a duplicate', async () => {
    await assert.rejects(
      tenants.create(db(), { clientId: 'Acme_Corp', name: 'x', timezone: 'UTC', settings: { ssrfAllowlist: [] } }),
      code('invalid_argument', /clientId must be a DNS label/),
    );
    await assert.rejects(
      tenants.create(db(), { clientId: 'zeta', name: 'x', timezone: 'India/Mumbai', settings: { ssrfAllowlist: [] } }),
      code('invalid_argument', /timezone must be an IANA timezone/),
    );
    await assert.rejects(
      tenants.create(db(), { clientId: 'acme', name: 'again', timezone: 'UTC', settings: { ssrfAllowlist: [] } }),
      code('already_exists', /tenant 'acme' already exists/),
    );
  });

  it('keeps the webhook secret sealed at rest, masked on read, unchanged when sent back masked', async () => {
    const created = await tenants.create(db(), {
      clientId: 'hooks',
      name: 'Hooks',
      timezone: 'UTC',
      settings: { webhookUrl: 'https://hooks.example.com/vap', webhookSecret: 'whsec-clear-0123456789', ssrfAllowlist: [] },
    });
    assert.equal(created.spec.settings.webhookSecret, maskedSecret);
    const raw = await db().selectFrom('tenants').select('settings').where('id', '=', created.id).executeTakeFirstOrThrow();
    assert.ok(!JSON.stringify(raw.settings).includes('whsec-clear'));
    assert.equal((await tenants.settingsWithSecrets(db(), created.id))?.webhookSecret, 'whsec-clear-0123456789');
    assert.equal(await tenants.isUnchanged(db(), created, created.spec), true);
    assert.equal(await tenants.isUnchanged(db(), created, { ...created.spec, timezone: 'Asia/Dubai' }), false);
    const { clientId: _c, ...update } = { ...created.spec, name: 'Hooks Ltd' };
    const updated = await tenants.update(db(), created.id, update);
    assert.equal(updated.spec.name, 'Hooks Ltd');
    assert.equal((await tenants.settingsWithSecrets(db(), created.id))?.webhookSecret, 'whsec-clear-0123456789');
  });

  it('lists in client ID order with a cursor and deletes', async () => {
    const page1 = await tenants.list(db(), { limit: 1 });
    assert.deepEqual(page1.items.map((t) => t.spec.clientId), ['acme']);
    const page2 = await tenants.list(db(), { limit: 5, cursor: page1.nextCursor });
    assert.deepEqual(page2.items.map((t) => t.spec.clientId), ['hooks']);
    const acme = await tenants.findByClientId(db(), 'acme');
    assert.ok(acme);
    await tenants.delete(db(), acme.id);
    await assert.rejects(tenants.delete(db(), acme.id), code('not_found', /not found/));
  });
});

forEachStore('tenants repository inside a caller transaction', (store) => {
  const tenants = createTenantsRepository(createSecretBox(randomBytes(32)));
  it('creates with the caller transaction and disappears on rollback (apply runs in one transaction)', async () => {
    await assert.rejects(
      store()
        .db.transaction()
        .execute(async (trx) => {
          await tenants.create(trx, { clientId: 'rolled', name: 'R', timezone: 'UTC', settings: { webhookSecret: 'whsec-0123456789abcdef', ssrfAllowlist: [] } });
          assert.ok(await tenants.findByClientId(trx, 'rolled'));
          throw new Error('roll back');
        }),
      /roll back/,
    );
    assert.equal(await tenants.findByClientId(store().db, 'rolled'), undefined);
  });
});
