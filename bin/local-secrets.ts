import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface LocalSecrets {
  readonly operatorToken: string;
  readonly secretKey: Buffer;
  /** Where a generated operator token was written, for the start-up message (never the token). */
  readonly operatorTokenFile?: string;
}

/** Accepts a 32-byte key as 64 hex characters or base64. */
export function decodeSecretKey(value: string): Buffer {
  const trimmed = value.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  if (key.length !== 32) throw new Error('SECRET_KEY must be 32 bytes, as 64 hex characters or base64');
  return key;
}

function readOrCreate(file: string, create: () => string): string {
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const value = create();
  writeFileSync(file, `${value}\n`, { mode: 0o600 });
  return value;
}

/**
 * Secrets for a local start with nothing configured: generated once into dataDir (mode 0600) so
 * `npm start` works without setup and restarts keep decrypting what was stored before.
 */
export function resolveLocalSecrets(dataDir: string, configured: { operatorToken?: string; secretKey?: string }): LocalSecrets {
  mkdirSync(dataDir, { recursive: true });
  const keyText = configured.secretKey ?? readOrCreate(path.join(dataDir, 'secret.key'), () => randomBytes(32).toString('hex'));
  if (configured.operatorToken) return { operatorToken: configured.operatorToken, secretKey: decodeSecretKey(keyText) };
  const file = path.join(dataDir, 'operator-token');
  const operatorToken = readOrCreate(file, () => `op_${randomBytes(32).toString('base64url')}`);
  return { operatorToken, secretKey: decodeSecretKey(keyText), operatorTokenFile: path.resolve(file) };
}
