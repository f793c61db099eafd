import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Short-lived signed download links for the Master Report: the dashboard asks for one with its
 * bearer token, then hands the URL to the browser, which downloads the CSV natively (streamed to
 * disk with the browser's own progress, never buffered in the page). The link carries the tenant,
 * the report's query string and an expiry, signed with HMAC-SHA256 under a key derived from the
 * platform's secret key, so any control process verifies it without a table.
 */
export interface DownloadClaims {
  readonly tenantId: string;
  /** The report's query parameters as the request gave them (filters, bom, formulaGuard). */
  readonly query: string;
  /** Expiry, epoch ms. */
  readonly expiresAt: number;
}

const prefix = 'rdl1';

/** The signing key: a label-specific derivation, so this key signs nothing else. */
export const downloadLinkKey = (secretKey: Buffer): Buffer => createHmac('sha256', secretKey).update('vap report download link v1').digest();

const sign = (key: Buffer, payload: string): string => createHmac('sha256', key).update(`${prefix}.${payload}`).digest('base64url');

export function issueDownloadToken(key: Buffer, claims: DownloadClaims): string {
  const payload = Buffer.from(JSON.stringify(claims), 'utf8').toString('base64url');
  return `${prefix}.${payload}.${sign(key, payload)}`;
}

export type DownloadCheck = { readonly ok: true; readonly claims: DownloadClaims } | { readonly ok: false; readonly why: 'malformed' | 'signature' | 'expired' };

/** Verifies the signature in constant time, then the expiry against `now` (epoch ms). */
export function verifyDownloadToken(key: Buffer, token: string, now: number): DownloadCheck {
  const parts = token.split('.');
  if (parts.length !== 3 || parts[0] !== prefix || !parts[1] || !parts[2] || token.length > 4096) return { ok: false, why: 'malformed' };
  const expected = Buffer.from(sign(key, parts[1]), 'utf8');
  const given = Buffer.from(parts[2], 'utf8');
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return { ok: false, why: 'signature' };
  let claims: DownloadClaims;
  try {
    claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8')) as DownloadClaims;
  } catch {
    return { ok: false, why: 'malformed' };
  }
  if (typeof claims.expiresAt !== 'number' || typeof claims.tenantId !== 'string' || typeof claims.query !== 'string') return { ok: false, why: 'malformed' };
  if (claims.expiresAt <= now) return { ok: false, why: 'expired' };
  return { ok: true, claims };
}
