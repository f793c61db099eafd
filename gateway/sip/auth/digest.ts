import { createHash } from 'node:crypto';

/**
 * Digest computations of RFC 7616 sec. 3.4.1-3.4.3, with the algorithms RFC 8760 brings to
 * SIP: MD5 (legacy), SHA-256 and SHA-512-256, each with its -sess variant.
 */
export const DIGEST_ALGORITHMS = ['MD5', 'SHA-256', 'SHA-512-256', 'MD5-sess', 'SHA-256-sess', 'SHA-512-256-sess'] as const;
export type DigestAlgorithm = (typeof DIGEST_ALGORITHMS)[number];
export type DigestHashName = 'MD5' | 'SHA-256' | 'SHA-512-256';

const NODE_HASH: Record<DigestHashName, string> = { MD5: 'md5', 'SHA-256': 'sha256', 'SHA-512-256': 'sha512-256' };

export function normalizeAlgorithm(text: string | undefined): DigestAlgorithm | undefined {
  // RFC 7616 sec. 3.3: an absent algorithm means MD5; names are case-insensitive.
  if (text === undefined) return 'MD5';
  const upper = text.toUpperCase();
  return DIGEST_ALGORITHMS.find((a) => a.toUpperCase() === upper);
}

export const hashOf = (alg: DigestAlgorithm): DigestHashName => alg.replace(/-sess$/i, '') as DigestHashName;
export const isSess = (alg: DigestAlgorithm): boolean => alg.endsWith('-sess');

export function h(hash: DigestHashName, data: string | Buffer): string {
  return createHash(NODE_HASH[hash]).update(data).digest('hex');
}

/** H(username:realm:password): what a credential store keeps instead of the password. */
export function ha1Of(hash: DigestHashName, username: string, realm: string, password: string): string {
  return h(hash, `${username}:${realm}:${password}`);
}

export interface DigestInput {
  readonly algorithm: DigestAlgorithm;
  /** H(username:realm:password) for the algorithm's hash. */
  readonly ha1: string;
  readonly method: string;
  readonly uri: string;
  readonly nonce: string;
  /** Absent for RFC 2069-style challenges that offered no qop. */
  readonly qop?: 'auth' | 'auth-int';
  readonly nc?: string;
  readonly cnonce?: string;
  readonly body?: Buffer;
}

export function digestResponse(d: DigestInput): string {
  const hash = hashOf(d.algorithm);
  const ha1 = isSess(d.algorithm) ? h(hash, `${d.ha1}:${d.nonce}:${d.cnonce ?? ''}`) : d.ha1;
  const a2 = d.qop === 'auth-int' ? `${d.method}:${d.uri}:${h(hash, d.body ?? Buffer.alloc(0))}` : `${d.method}:${d.uri}`;
  const ha2 = h(hash, a2);
  if (d.qop === undefined) return h(hash, `${ha1}:${d.nonce}:${ha2}`);
  return h(hash, `${ha1}:${d.nonce}:${d.nc ?? ''}:${d.cnonce ?? ''}:${d.qop}:${ha2}`);
}
