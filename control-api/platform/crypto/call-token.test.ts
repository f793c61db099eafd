import assert from 'node:assert/strict';
import { callTokenKey, issueCallToken, verifyCallToken } from './call-token.js';

describe('web call tokens', () => {
  const key = callTokenKey(Buffer.alloc(32, 3));
  const claims = { tenantId: 't-1', target: { kind: 'recipe' as const, recipeId: 'r-1' }, expiresAt: 1_000_000 };

  it('verifies what it issued until the expiry, with the claims and a fresh id each time', () => {
    const a = issueCallToken(key, claims);
    const b = issueCallToken(key, claims);
    assert.notEqual(a.claims.id, b.claims.id);
    const check = verifyCallToken(key, a.token, 999_999);
    assert.ok(check.ok);
    assert.deepEqual(check.claims, a.claims);
    assert.deepEqual(verifyCallToken(key, a.token, 1_000_000), { ok: false, why: 'expired' });
  });

  it('refuses another key, a changed payload or signature, and text that is no token', () => {
    const { token } = issueCallToken(key, claims);
    assert.deepEqual(verifyCallToken(callTokenKey(Buffer.alloc(32, 4)), token, 0), { ok: false, why: 'signature' });
    const [prefix, payload, signature] = token.split('.') as [string, string, string];
    const forged = Buffer.from(JSON.stringify({ ...claims, tenantId: 't-2', id: 'x' })).toString('base64url');
    assert.deepEqual(verifyCallToken(key, `${prefix}.${forged}.${signature}`, 0), { ok: false, why: 'signature' });
    assert.deepEqual(verifyCallToken(key, `${prefix}.${payload}.${signature.slice(1)}x`, 0), { ok: false, why: 'signature' });
    for (const junk of ['', 'wct1', 'wct1..', 'abc.def.ghi', `wct2.${payload}.${signature}`, `${token}.more`]) {
      assert.deepEqual(verifyCallToken(key, junk, 0), { ok: false, why: 'malformed' }, junk);
    }
  });
});
