import { createCipheriv, createDecipheriv, createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Encryption of secrets at rest with the platform key (`secrets.secretKey`).
 *
 * Format: `vap1.<key id>.<iv>.<ciphertext+tag>` (base64url parts). AES-256-GCM with a random
 * 96-bit IV per value (NIST SP 800-38D sec. 8.2.2: fine for far fewer than 2^32 values per key).
 * The key id (first 8 bytes of SHA-256 over the key) lets an old key stay readable during a
 * rotation. The associated data binds a ciphertext to where it belongs (tenant, kind, field),
 * so a value copied into another row or field does not decrypt.
 */
export interface SecretBox {
  seal(plain: string, context: string): string;
  open(sealed: string, context: string): string;
  /** True when `sealed` decrypts to `candidate`; compares digests in constant time. */
  matches(sealed: string, candidate: string, context: string): boolean;
  isSealed(value: unknown): value is string;
}

const version = 'vap1';
const ivBytes = 12;
const tagBytes = 16;

const keyId = (key: Buffer): string => createHash('sha256').update(key).digest().subarray(0, 8).toString('base64url');

export class SecretBoxError extends Error {
  override readonly name = 'SecretBoxError';
}

/** `current` encrypts; `previous` keys only decrypt (key rotation). Keys are 32 bytes. */
export function createSecretBox(current: Buffer, previous: readonly Buffer[] = []): SecretBox {
  for (const key of [current, ...previous]) {
    if (key.length !== 32) throw new SecretBoxError('secret key must be 32 bytes (AES-256)');
  }
  const keys = new Map<string, Buffer>([...previous, current].map((k) => [keyId(k), Buffer.from(k)]));
  const currentId = keyId(current);

  const open = (sealed: string, context: string): string => {
    const parts = sealed.split('.');
    if (parts.length !== 4 || parts[0] !== version) throw new SecretBoxError('not a sealed secret (unknown format or version)');
    const [, kid, ivText, bodyText] = parts as [string, string, string, string];
    const key = keys.get(kid);
    if (!key) throw new SecretBoxError('secret was sealed with a key this platform does not hold');
    const iv = Buffer.from(ivText, 'base64url');
    const body = Buffer.from(bodyText, 'base64url');
    if (iv.length !== ivBytes || body.length < tagBytes) throw new SecretBoxError('sealed secret is truncated');
    const decipher = createDecipheriv('aes-256-gcm', key, iv);
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(body.subarray(body.length - tagBytes));
    try {
      return Buffer.concat([decipher.update(body.subarray(0, body.length - tagBytes)), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretBoxError('sealed secret failed authentication (wrong key, context or tampered value)');
    }
  };

  return {
    seal(plain, context) {
      const iv = randomBytes(ivBytes);
      const cipher = createCipheriv('aes-256-gcm', current, iv);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]);
      return [version, currentId, iv.toString('base64url'), body.toString('base64url')].join('.');
    },
    open,
    matches(sealed, candidate, context) {
      let plain: string;
      try {
        plain = open(sealed, context);
      } catch {
        return false;
      }
      const a = createHash('sha256').update(plain, 'utf8').digest();
      const b = createHash('sha256').update(candidate, 'utf8').digest();
      return timingSafeEqual(a, b);
    },
    isSealed(value): value is string {
      return typeof value === 'string' && value.startsWith(`${version}.`) && value.split('.').length === 4;
    },
  };
}
