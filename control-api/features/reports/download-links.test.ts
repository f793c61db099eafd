import assert from 'node:assert/strict';
import { downloadLinkKey, issueDownloadToken, verifyDownloadToken } from './download-links.js';
import { callTokenKey, issueCallToken, verifyCallToken } from '../../platform/crypto/call-token.js';

describe('signed tokens: report download links and web-call tokens', () => {
  const secret = Buffer.alloc(32, 7);
  const now = 1_800_000_000_000;

  it('a download link verifies until it expires, and names what is wrong with a bad one', () => {
    const key = downloadLinkKey(secret);
    const token = issueDownloadToken(key, { tenantId: 't1', query: 'bom=true', expiresAt: now + 60_000 });
    assert.deepEqual(verifyDownloadToken(key, token, now), { ok: true, claims: { tenantId: 't1', query: 'bom=true', expiresAt: now + 60_000 } });
    assert.deepEqual(verifyDownloadToken(key, token, now + 60_000), { ok: false, why: 'expired' });
    const [prefix, payload, signature] = token.split('.');
    assert.deepEqual(verifyDownloadToken(key, `${prefix}.${payload}.${signature?.slice(1)}x`, now), { ok: false, why: 'signature' });
    assert.deepEqual(verifyDownloadToken(downloadLinkKey(Buffer.alloc(32, 8)), token, now), { ok: false, why: 'signature' });
    assert.deepEqual(verifyDownloadToken(key, `xyz.${payload}.${signature}`, now), { ok: false, why: 'malformed' });
    assert.deepEqual(verifyDownloadToken(key, 'a.b', now), { ok: false, why: 'malformed' });
    assert.deepEqual(verifyDownloadToken(key, `${token}${'x'.repeat(4096)}`, now), { ok: false, why: 'malformed' });
  });

  it('one kind of token never passes for the other, even under the same secret', () => {
    const call = issueCallToken(callTokenKey(secret), { tenantId: 't1', target: { kind: 'recipe', recipeId: 'r1' }, expiresAt: now + 60_000 });
    assert.equal(verifyCallToken(callTokenKey(secret), call.token, now).ok, true);
    assert.deepEqual(verifyDownloadToken(downloadLinkKey(secret), call.token, now), { ok: false, why: 'malformed' });
    const link = issueDownloadToken(downloadLinkKey(secret), { tenantId: 't1', query: '', expiresAt: now + 60_000 });
    assert.deepEqual(verifyCallToken(callTokenKey(secret), link, now), { ok: false, why: 'malformed' });
  });
});
