import assert from 'node:assert/strict';
import { forEachStore } from '../../../test/helpers/stores.js';
import { issueToken, revokeToken, verifyToken } from './api-tokens.js';

forEachStore('API tokens', (store) => {
  let tenantId: string;
  before(async () => {
    const row = await store().db.insertInto('tenants').values({ client_id: 'acme', name: 'Acme' }).returning('id').executeTakeFirstOrThrow();
    tenantId = row.id;
  });

  it('stores only a digest and resolves the clear token to its tenant', async () => {
    const issued = await issueToken(store().db, { tenantId, name: 'ci', scopes: ['campaign'] });
    const rows = await store().db.selectFrom('api_tokens').selectAll().execute();
    assert.ok(rows.every((r) => r.token_hash !== issued.token && !r.token_hash.includes(issued.token)));
    const owner = await verifyToken(store().db, issued.token, 'campaign');
    assert.equal(owner?.tenantId, tenantId);
  });

  it('records when a token was last used, at most once a minute, and not for a refused use', async () => {
    const db = store().db;
    const issued = await issueToken(db, { tenantId, name: 'used', scopes: ['sandbox'] });
    const lastUsed = async (): Promise<Date | null> =>
      (await db.selectFrom('api_tokens').select('last_used_at').where('id', '=', issued.id).executeTakeFirstOrThrow()).last_used_at;
    assert.equal(await lastUsed(), null);
    assert.equal(await verifyToken(db, issued.token, 'campaign'), null);
    assert.equal(await lastUsed(), null, 'a use with the wrong scope is not a use');
    const t0 = new Date('2026-11-21T10:00:00.000Z');
    assert.ok(await verifyToken(db, issued.token, 'sandbox', t0));
    assert.equal((await lastUsed())?.toISOString(), t0.toISOString());
    assert.ok(await verifyToken(db, issued.token, 'sandbox', new Date(t0.getTime() + 30_000)));
    assert.equal((await lastUsed())?.toISOString(), t0.toISOString(), 'within the minute: no write');
    const t1 = new Date(t0.getTime() + 61_000);
    assert.ok(await verifyToken(db, issued.token, 'sandbox', t1));
    assert.equal((await lastUsed())?.toISOString(), t1.toISOString());
  });

  it('refuses a wrong scope, an unknown, an expired and a revoked token', async () => {
    const issued = await issueToken(store().db, { tenantId, name: 'scoped', scopes: ['sandbox'] });
    assert.equal(await verifyToken(store().db, issued.token, 'campaign'), null);
    assert.equal(await verifyToken(store().db, `${issued.token}x`, 'sandbox'), null);
    const expiring = await issueToken(store().db, { tenantId, name: 'old', scopes: ['campaign'], expiresAt: new Date(Date.now() - 1000) });
    assert.equal(await verifyToken(store().db, expiring.token, 'campaign'), null);
    assert.ok(await verifyToken(store().db, issued.token, 'sandbox'));
    assert.equal(await revokeToken(store().db, tenantId, issued.id), true);
    assert.equal(await verifyToken(store().db, issued.token, 'sandbox'), null);
    assert.equal(await revokeToken(store().db, tenantId, issued.id), false);
  });
});
