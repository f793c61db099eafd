import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { maskedSecret } from './secret.js';
import { createSecretBox, SecretBoxError } from './secret-box.js';
import { maskSecrets, missingSecrets, openSecrets, sealSecrets, secretsUnchanged } from './secret-fields.js';

describe('secret box (AES-256-GCM at rest)', () => {
  const key = randomBytes(32);
  const box = createSecretBox(key);

  it('round-trips Unicode secrets in the versioned format without the clear text', () => {
    const sealed = box.seal('pässwörd-सुरक्षित', 'ctx');
    assert.match(sealed, /^vap1\.[A-Za-z0-9_-]{11}\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/);
    assert.ok(!sealed.includes('pässwörd'));
    assert.equal(box.open(sealed, 'ctx'), 'pässwörd-सुरक्षित');
    assert.notEqual(box.seal('same', 'ctx'), box.seal('same', 'ctx'), 'a fresh IV per value');
  });

  it('refuses another context, a tampered value, an unknown key and a foreign format', () => {
    const sealed = box.seal('secret', 'tenant-a/PhoneNumber/provider.authToken');
    assert.throws(() => box.open(sealed, 'tenant-b/PhoneNumber/provider.authToken'), SecretBoxError);
    const parts = sealed.split('.');
    const body = Buffer.from(parts[3] as string, 'base64url');
    body[0] = (body[0] as number) ^ 1;
    assert.throws(() => box.open([...parts.slice(0, 3), body.toString('base64url')].join('.'), 'tenant-a/PhoneNumber/provider.authToken'), /failed authentication/);
    assert.throws(() => createSecretBox(randomBytes(32)).open(sealed, 'tenant-a/PhoneNumber/provider.authToken'), /key this platform does not hold/);
    assert.throws(() => box.open('plain text', 'x'), /not a sealed secret/);
    assert.throws(() => createSecretBox(randomBytes(16)), /32 bytes/);
  });

  it('reads values sealed with a previous key after rotation', () => {
    const old = box.seal('kept', 'c');
    const rotated = createSecretBox(randomBytes(32), [key]);
    assert.equal(rotated.open(old, 'c'), 'kept');
    assert.equal(rotated.matches(old, 'kept', 'c'), true);
    assert.equal(rotated.matches(old, 'other', 'c'), false);
  });

  describe('secret fields of a spec', () => {
    const options = { box, tenantId: 't1', kind: 'AuthProfile', paths: ['auth.password', 'auth.token'] };
    const spec = { name: 'crm', auth: { scheme: 'basic', username: 'u', password: 'p@ss' } };

    it('seals, masks on read, opens for use', () => {
      const sealed = sealSecrets(spec, undefined, options);
      assert.ok(box.isSealed(sealed.auth.password));
      assert.equal(spec.auth.password, 'p@ss', 'the input is not mutated');
      assert.deepEqual(maskSecrets(sealed, options.paths), { name: 'crm', auth: { scheme: 'basic', username: 'u', password: maskedSecret } });
      assert.deepEqual(openSecrets(sealed, options), spec);
    });

    it('keeps the stored value for a masked or absent secret of the same variant only', () => {
      const stored = sealSecrets(spec, undefined, options);
      assert.equal(sealSecrets({ ...spec, auth: { ...spec.auth, password: maskedSecret } }, stored, options).auth.password, stored.auth.password);
      const omitted: { name: string; auth: { scheme: string; username: string; password?: string } } = { name: 'crm', auth: { scheme: 'basic', username: 'u' } };
      assert.equal(sealSecrets(omitted, stored, options).auth.password, stored.auth.password);
      const switched = sealSecrets({ name: 'crm', auth: { scheme: 'bearer', token: maskedSecret } }, stored, options);
      assert.deepEqual(missingSecrets(switched, ['auth.token']), ['auth.token']);
    });

    it('compares incoming secrets with stored ones without opening them for the caller', () => {
      const stored = sealSecrets(spec, undefined, options);
      assert.equal(secretsUnchanged(stored, { ...spec, auth: { ...spec.auth, password: maskedSecret } }, options), true);
      assert.equal(secretsUnchanged(stored, spec, options), true);
      assert.equal(secretsUnchanged(stored, { ...spec, auth: { ...spec.auth, password: 'new' } }, options), false);
    });
  });
});
