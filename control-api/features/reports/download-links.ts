import { derivedKey, signToken, tokenFormat, verifyToken, type TokenCheck } from '../../platform/crypto/signed-token.js';

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

const format = tokenFormat<DownloadClaims>('rdl1', 4096, { tenantId: 'string', query: 'string' });

/** The signing key: a label-specific derivation, so this key signs nothing else. */
export const downloadLinkKey = (secretKey: Buffer): Buffer => derivedKey(secretKey, 'vap report download link v1');

export const issueDownloadToken = (key: Buffer, claims: DownloadClaims): string => signToken(format, key, claims);

export type DownloadCheck = TokenCheck<DownloadClaims>;

/** Verifies the signature in constant time, then the expiry against `now` (epoch ms). */
export const verifyDownloadToken = (key: Buffer, token: string, now: number): DownloadCheck => verifyToken(format, key, token, now);
