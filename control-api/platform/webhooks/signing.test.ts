import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { signatureHeaderValue, verifySignature } from './signing.js';

describe('webhook signing (X-VAP-Signature)', () => {
  const now = Date.UTC(2026, 10, 21, 12, 0, 0);
  const body = '{"event":"block","value":"नमस्ते"}';

  it('is HMAC-SHA256 over "timestamp.body" and verifies', () => {
    const header = signatureHeaderValue('s3cret', body, now);
    const t = Math.floor(now / 1000);
    assert.equal(header, `t=${t},v1=${createHmac('sha256', 's3cret').update(`${t}.${body}`).digest('hex')}`);
    assert.deepEqual(verifySignature('s3cret', header, body, { nowMs: now + 10_000 }), { ok: true });
  });

  it('rejects a changed body, a wrong secret, an old timestamp and garbage', () => {
    const header = signatureHeaderValue('s3cret', body, now);
    assert.deepEqual(verifySignature('s3cret', header, `${body} `, { nowMs: now }), { ok: false, reason: 'mismatch' });
    assert.deepEqual(verifySignature('other', header, body, { nowMs: now }), { ok: false, reason: 'mismatch' });
    assert.deepEqual(verifySignature('s3cret', header, body, { nowMs: now + 301_000 }), { ok: false, reason: 'expired' });
    assert.deepEqual(verifySignature('s3cret', 'v1=abc', body, { nowMs: now }), { ok: false, reason: 'malformed' });
  });

  it('accepts any of several v1 values (secret rotation)', () => {
    const fresh = signatureHeaderValue('new', body, now);
    const old = signatureHeaderValue('old', body, now).split(',')[1];
    assert.deepEqual(verifySignature('new', `${fresh},${old}`, body, { nowMs: now }), { ok: true });
    assert.deepEqual(verifySignature('old', `${fresh},${old}`, body, { nowMs: now }), { ok: true });
  });
});
