import type { Clock } from '../../core/clock.js';
import type { SipRequest } from '../sip/message/message.js';
import type { Flow } from '../sip/transport/types.js';
import type { GuardVerdict } from '../sip/ua/sip-stack.js';

export interface AbuseGuardOptions {
  readonly clock: Clock;
  /** New out-of-dialog requests per second and source address (token bucket rate). */
  readonly perSourceRate?: number;
  /** Bucket size: a burst a source may send at once. */
  readonly perSourceBurst?: number;
  /** Calls being set up or up, in this process; beyond it new INVITEs get 503. */
  readonly maxConcurrentCalls?: number;
  readonly concurrentCalls: () => number;
  /** Failed authentications (403 unknown source) before a source is dropped. */
  readonly authFailureLimit?: number;
  readonly authFailureWindowMs?: number;
  readonly blockMs?: number;
  readonly retryAfterSeconds?: number;
  /** User-Agent patterns of SIP scanners; matches are dropped without an answer. */
  readonly scannerUserAgents?: readonly RegExp[];
}

export const defaultScannerUserAgents: readonly RegExp[] = [
  /friendly-scanner/i, /sipvicious/i, /sipcli/i, /sip-scan/i, /sipsak/i, /sundayddr/i, /iWar/i, /VaxSIPUserAgent/i,
  /smap/i, /pplsip/i, /sipptk/i, /Cisco-SIPGateway\/?[^ ]*\s*scan/i,
];

/** Bounds for the per-source tables, so a spoofed-source flood cannot grow them without end. */
const MAX_TRACKED_SOURCES = 100_000;

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * Overload and abuse protection applied to new out-of-dialog requests only, so calls already up
 * are never touched: scanner User-Agents and sources that failed authentication too often are
 * dropped silently (answering scanners only confirms a SIP service), a source over its rate and
 * INVITEs beyond the global concurrency limit get 503 with Retry-After (RFC 3261 sec. 21.5.4).
 */
export class AbuseGuard {
  private readonly buckets = new Map<string, Bucket>();
  private readonly failures = new Map<string, number[]>();
  private readonly blocked = new Map<string, number>();
  private readonly rate: number;
  private readonly burst: number;
  private readonly scanners: readonly RegExp[];

  constructor(private readonly options: AbuseGuardOptions) {
    this.rate = options.perSourceRate ?? 50;
    this.burst = options.perSourceBurst ?? 100;
    this.scanners = options.scannerUserAgents ?? defaultScannerUserAgents;
  }

  readonly verdict = (req: SipRequest, flow: Flow): GuardVerdict => {
    const source = flow.remote.address;
    const now = this.options.clock.now();
    const until = this.blocked.get(source);
    if (until !== undefined) {
      if (until > now) return { action: 'drop', why: 'source blocked after repeated authentication failures' };
      this.blocked.delete(source);
    }
    const ua = req.headers.get('user-agent');
    if (ua !== undefined && this.scanners.some((p) => p.test(ua))) return { action: 'drop', why: `scanner User-Agent ${ua.slice(0, 40)}` };
    const retry: ReadonlyArray<readonly [string, string]> = [['Retry-After', String(this.options.retryAfterSeconds ?? 5)]];
    if (!this.take(source, now)) return { action: 'reject', status: 503, headers: retry, why: 'per-source rate limit' };
    if (req.method === 'INVITE' && this.options.concurrentCalls() >= (this.options.maxConcurrentCalls ?? 1000)) {
      return { action: 'reject', status: 503, headers: retry, why: 'global concurrency limit' };
    }
    return { action: 'accept' };
  };

  private take(source: string, now: number): boolean {
    let b = this.buckets.get(source);
    if (!b) {
      if (this.buckets.size >= MAX_TRACKED_SOURCES) this.prune(now);
      b = { tokens: this.burst, at: now };
      this.buckets.set(source, b);
    }
    b.tokens = Math.min(this.burst, b.tokens + ((now - b.at) / 1000) * this.rate);
    b.at = now;
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }

  private prune(now: number): void {
    for (const [k, b] of this.buckets) if (b.tokens + ((now - b.at) / 1000) * this.rate >= this.burst) this.buckets.delete(k);
    if (this.buckets.size >= MAX_TRACKED_SOURCES) this.buckets.clear();
  }

  /** A request from `source` failed authentication (unknown trunk source, bad digest). */
  recordAuthFailure(source: string): void {
    const now = this.options.clock.now();
    const window = this.options.authFailureWindowMs ?? 60_000;
    const list = (this.failures.get(source) ?? []).filter((t) => t > now - window);
    list.push(now);
    if (list.length >= (this.options.authFailureLimit ?? 10)) {
      this.failures.delete(source);
      if (this.blocked.size < MAX_TRACKED_SOURCES) this.blocked.set(source, now + (this.options.blockMs ?? 10 * 60_000));
      return;
    }
    if (this.failures.size >= MAX_TRACKED_SOURCES) this.failures.clear();
    this.failures.set(source, list);
  }

  isBlocked(source: string): boolean {
    return (this.blocked.get(source) ?? 0) > this.options.clock.now();
  }
}
