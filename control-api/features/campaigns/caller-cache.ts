/**
 * SendMessage callers (client ID + token digest -> tenant and timezone) remembered for a few
 * seconds, so a busy API client does not cost a tenant/token lookup per request. Only successful
 * lookups are kept. The cache is never the authority for a write: the intake statement re-checks
 * tenant, timezone, token (revocation, expiry, scope) and campaign in its own snapshot and sends
 * anything that no longer matches through the uncached path (see message-intake.ts); a request
 * refused by validation re-checks its caller first, so a revoked token is `unauthenticated` at once.
 */
export interface CachedCaller {
  readonly tenantId: string;
  readonly timezone: string;
  /** The tenant's `settings.ssrfAllowlist`, for the Callback.URL check (delivery checks again). */
  readonly ssrfAllowlist: readonly string[];
}

export class CallerCache {
  private readonly entries = new Map<string, { caller: CachedCaller; until: number }>();

  constructor(private readonly options: { ttlMs: number; maxEntries: number }) {}

  get(clientId: string, tokenHash: string, now: number): CachedCaller | undefined {
    const key = `${clientId}\u0000${tokenHash}`;
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (hit.until <= now) {
      this.entries.delete(key);
      return undefined;
    }
    return hit.caller;
  }

  set(clientId: string, tokenHash: string, caller: CachedCaller, now: number): void {
    // Bounded: when full, start over rather than track recency (entries live seconds anyway).
    if (this.entries.size >= this.options.maxEntries) this.entries.clear();
    this.entries.set(`${clientId}\u0000${tokenHash}`, { caller, until: now + this.options.ttlMs });
  }

  forget(clientId: string, tokenHash: string): void {
    this.entries.delete(`${clientId}\u0000${tokenHash}`);
  }
}
