import type { Clock } from '../../../core/clock.js';

/** How a lookup ended when it found nothing usable. */
export type DnsMiss = 'absent' | 'failed';

export interface DnsCacheOptions {
  readonly clock: Clock;
  /** Most entries kept; the least recently used goes first (default 1000). */
  readonly maxEntries?: number;
  /** NXDOMAIN / no data (RFC 2308 sec. 5), default 5 s: short, so a record just added is seen soon. */
  readonly negativeTtlSeconds?: number;
  /** Timeout, SERVFAIL, refused (RFC 2308 sec. 7: at most 5 minutes), default 30 s. */
  readonly failureTtlSeconds?: number;
  /** Cap on any positive TTL (default 3600 s). */
  readonly maxTtlSeconds?: number;
}

/** A positive answer with the TTL it may be kept for, or a miss of either kind. */
export type DnsAnswer<T> = { readonly records: readonly T[]; readonly ttlSeconds: number } | { readonly miss: DnsMiss };

interface Entry {
  readonly value: { readonly records: readonly unknown[] } | { readonly miss: DnsMiss };
  readonly expiresAt: number;
}

/**
 * A small TTL cache for the RFC 3263 lookups (NAPTR, SRV, A, AAAA) keyed by type and name. Positive
 * answers live for their TTL (RFC 1035 sec. 3.2.1, capped), "no such name/data" for a few seconds
 * and server failures or timeouts a little longer (RFC 2308 sec. 5, 7), so a dead DNS server costs
 * its timeouts once per window instead of on every call. Concurrent lookups of one key share one
 * query. Size is bounded: the least recently used entry is dropped first (Map insertion order).
 */
export class DnsCache {
  private readonly entries = new Map<string, Entry>();
  private readonly inflight = new Map<string, Promise<Entry['value']>>();
  private readonly clock: Clock;
  private readonly maxEntries: number;
  private readonly negativeMs: number;
  private readonly failureMs: number;
  private readonly maxTtlMs: number;

  constructor(options: DnsCacheOptions) {
    this.clock = options.clock;
    this.maxEntries = Math.max(1, options.maxEntries ?? 1000);
    this.negativeMs = (options.negativeTtlSeconds ?? 5) * 1000;
    this.failureMs = (options.failureTtlSeconds ?? 30) * 1000;
    this.maxTtlMs = (options.maxTtlSeconds ?? 3600) * 1000;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The cached records of `type name`, else `lookup`'s (stored for their TTL); a miss is an empty list. */
  async get<T>(type: string, name: string, lookup: () => Promise<DnsAnswer<T>>): Promise<readonly T[]> {
    const key = `${type} ${name.toLowerCase()}`;
    const hit = this.entries.get(key);
    if (hit && hit.expiresAt > this.clock.now()) {
      // Most recently used goes to the end of the eviction order.
      this.entries.delete(key);
      this.entries.set(key, hit);
      return 'records' in hit.value ? (hit.value.records as readonly T[]) : [];
    }
    if (hit) this.entries.delete(key);
    let pending = this.inflight.get(key);
    if (!pending) {
      pending = this.fetch(key, lookup);
      this.inflight.set(key, pending);
    }
    const value = await pending;
    return 'records' in value ? (value.records as readonly T[]) : [];
  }

  private async fetch<T>(key: string, lookup: () => Promise<DnsAnswer<T>>): Promise<Entry['value']> {
    try {
      const answer = await lookup();
      const value = 'miss' in answer ? { miss: answer.miss } : { records: answer.records };
      const ttlMs = 'miss' in answer ? (answer.miss === 'absent' ? this.negativeMs : this.failureMs) : Math.min(answer.ttlSeconds * 1000, this.maxTtlMs);
      // TTL 0 means "use once, do not cache" (RFC 1035 sec. 3.2.1).
      if (ttlMs > 0) this.store(key, { value, expiresAt: this.clock.now() + ttlMs });
      return value;
    } finally {
      this.inflight.delete(key);
    }
  }

  private store(key: string, entry: Entry): void {
    this.entries.delete(key);
    this.entries.set(key, entry);
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }

  clear(): void {
    this.entries.clear();
  }
}
