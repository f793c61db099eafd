import assert from 'node:assert/strict';
import { forEachStore } from '../../test/helpers/stores.js';
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
