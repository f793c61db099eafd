import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Signature on every webhook the platform sends (Webhook block, campaign callbacks, insights):
 * `X-VAP-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`. The
 * timestamp is inside the MAC so a captured delivery cannot be replayed later; receivers check
 * it is recent (default tolerance 5 minutes).
 */
export const signatureHeader = 'X-VAP-Signature';

export function computeSignature(secret: string, timestamp: number, body: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${body}`, 'utf8').digest('hex');
}

export function signatureHeaderValue(secret: string, body: string, nowMs: number = Date.now()): string {
  const timestamp = Math.floor(nowMs / 1000);
  return `t=${timestamp},v1=${computeSignature(secret, timestamp, body)}`;
}

export type VerifyResult = { readonly ok: true } | { readonly ok: false; readonly reason: 'malformed' | 'expired' | 'mismatch' };

export function verifySignature(secret: string, header: string, body: string, options: { nowMs?: number; toleranceSeconds?: number } = {}): VerifyResult {
  const parts = new Map<string, string[]>();
  for (const piece of header.split(',')) {
    const [key, value] = piece.trim().split('=', 2);
    if (key && value) parts.set(key, [...(parts.get(key) ?? []), value]);
  }
  const timestamp = Number(parts.get('t')?.[0]);
  const candidates = parts.get('v1') ?? [];
  if (!Number.isInteger(timestamp) || candidates.length === 0) return { ok: false, reason: 'malformed' };
  const now = Math.floor((options.nowMs ?? Date.now()) / 1000);
  if (Math.abs(now - timestamp) > (options.toleranceSeconds ?? 300)) return { ok: false, reason: 'expired' };
  const expected = Buffer.from(computeSignature(secret, timestamp, body), 'hex');
  // Several v1 values let a sender roll its secret without a gap.
  const match = candidates.some((candidate) => {
    const given = Buffer.from(candidate, 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  return match ? { ok: true } : { ok: false, reason: 'mismatch' };
}
