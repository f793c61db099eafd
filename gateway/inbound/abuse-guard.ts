import type { Clock } from '../../core/clock.js';
import type { SipRequest } from '../sip/message/message.js';
import { countShed } from '../sip/sip-metrics.js';
import type { AdmissionDecision, AdmissionPolicy, ArrivingRequest } from '../sip/transport/receive-gate.js';
import type { Flow } from '../sip/transport/types.js';
import type { GuardVerdict } from '../sip/ua/sip-stack.js';
import type { CallCapacity } from './call-capacity.js';

export interface AbuseGuardOptions {
  readonly clock: Clock;
  /** New requests per second and source address that go on to the stack (token bucket rate). */
  readonly perSourceRate?: number;
  /** Bucket size: a burst a source may send at once. */
  readonly perSourceBurst?: number;
  /**
   * Requests per second and source answered 503 once its bucket is empty (also the burst of this
   * second bucket); what a source sends beyond it is dropped unanswered. 0: drop at once.
   */
  readonly refusalRate?: number;
  /** Calls being set up or up, in this process; beyond it new INVITEs get 503. */
  readonly maxConcurrentCalls?: number;
  readonly concurrentCalls: () => number;
  /** True while a dialog with this Call-ID is live: its requests are never limited. */
  readonly liveDialog?: (callId: string) => boolean;
  /** Failed authentications (403 unknown source) before a source is dropped. */
  readonly authFailureLimit?: number;
  readonly authFailureWindowMs?: number;
  readonly blockMs?: number;
  readonly retryAfterSeconds?: number;
  /** User-Agent patterns of SIP scanners; matches are dropped without an answer. */
  readonly scannerUserAgents?: readonly RegExp[];
  /**
   * The key a request's source counts under (buckets, blocks); the packet's source address when
   * absent. Behind a SIP edge it is the carrier's address the edge passed on (edge-source.ts).
   */
  readonly admissionKey?: (source: string, header: (key: string) => string | undefined) => string;
  /** The node's room for new calls (call-capacity.ts); without it only the sources are limited. */
  readonly capacity?: Pick<CallCapacity, 'room' | 'take'>;
  /** True for a request whose server transaction is live (SipStack.isRetransmission): its transaction absorbs it. */
  readonly retransmission?: (request: ArrivingRequest) => boolean;
}

/**
 * Attack tools only. Monitoring tools that probe with OPTIONS (sipsak, Kamailio's dispatcher,
 * SIPp, Nagios check_sip) are not scanners: a carrier's health check must see us up.
 */
export const defaultScannerUserAgents: readonly RegExp[] = [
  /friendly-scanner/i, /sipvicious/i, /sipcli/i, /sip-scan/i, /sundayddr/i, /iWar/i, /VaxSIPUserAgent/i,
  /smap/i, /pplsip/i, /sipptk/i, /Cisco-SIPGateway\/?[^ ]*\s*scan/i,
];

/** Bounds for the per-source tables, so a spoofed-source flood cannot grow them without end. */
const MAX_TRACKED_SOURCES = 100_000;

interface Bucket {
  /** Admission tokens (perSourceRate, perSourceBurst). */
  tokens: number;
  /** Refusal tokens (refusalRate, burst refusalRate). */
  refusals: number;
  at: number;
}

const ADMIT: AdmissionDecision = { action: 'admit' };
/** A new call: it waits behind everything else and counts against the node's capacity meanwhile. */
const ADMIT_CALL: AdmissionDecision = { action: 'admit', newCall: true };
const BLOCKED: AdmissionDecision = { action: 'drop', reason: 'source blocked' };
const SCANNER: AdmissionDecision = { action: 'drop', reason: 'scanner User-Agent' };
const OVER_RATE: AdmissionDecision = { action: 'refuse', reason: 'source over its rate' };
const GLOBAL_LIMIT = 'global concurrency limit';
const OVER_REFUSALS: AdmissionDecision = { action: 'drop', reason: 'source over its refusal rate' };
const nodeRefusalCache = new Map<string, AdmissionDecision>();
/** One frozen decision per capacity reason (a fixed set), so a refusal allocates nothing. */
const nodeRefusals = (reason: string): AdmissionDecision => {
  let d = nodeRefusalCache.get(reason);
  if (!d) nodeRefusalCache.set(reason, (d = { action: 'refuse', reason }));
  return d;
};

/**
 * Overload and abuse protection. Before any parse (`admit`, the gate's AdmissionPolicy), per
 * source address: requests of a live dialog, CANCELs and retransmitted INVITEs of a live
 * transaction always pass (calls already up are never touched; RFC 3261 sec. 9.2 needs CANCEL to
 * stop a ringing call); for every other request, a blocked source (failed authentication too
 * often) or a scanner User-Agent is dropped silently (answering scanners only confirms a SIP
 * service); a new call (INVITE without To tag) the node has no room for (`capacity`) is refused;
 * then a token bucket admits `perSourceRate` per second (burst `perSourceBurst`). Refusals are
 * 503 with Retry-After (sec. 21.5.4) from a second bucket of `refusalRate` per second and
 * source; beyond it they are dropped. After the parse (`verdict`, the stack's RequestGuard),
 * INVITEs beyond the global concurrency limit get 503 as well.
 */
export class AbuseGuard implements AdmissionPolicy {
  private readonly buckets = new Map<string, Bucket>();
  private readonly failures = new Map<string, number[]>();
  private readonly blocked = new Map<string, number>();
  private readonly rate: number;
  private readonly burst: number;
  private readonly refusalRate: number;
  private readonly scanners: readonly RegExp[];
  private readonly retryHeaders: ReadonlyArray<readonly [string, string]>;

  constructor(private readonly options: AbuseGuardOptions) {
    this.rate = options.perSourceRate ?? 50;
    this.burst = options.perSourceBurst ?? 100;
    this.refusalRate = options.refusalRate ?? 5000;
    this.scanners = options.scannerUserAgents ?? defaultScannerUserAgents;
    this.retryHeaders = [['Retry-After', String(this.retryAfterSeconds)]];
  }

  get retryAfterSeconds(): number {
    return this.options.retryAfterSeconds ?? 5;
  }

  readonly admit = (packetSource: string, req: ArrivingRequest): AdmissionDecision => {
    if (req.method === 'CANCEL') return ADMIT;
    if (req.toTag !== undefined && this.options.liveDialog) {
      // A To tag alone proves nothing (anyone can add one): only a live dialog's Call-ID passes free.
      const callId = req.header('call-id');
      if (callId !== undefined && this.options.liveDialog(callId)) return ADMIT;
    }
    const newCall = req.method === 'INVITE' && req.toTag === undefined;
    // Its transaction absorbs it: refusing it would answer 503 to a call being set up, or to a BYE
    // whose 200 was slow to reach its sender, from a node that holds that 200.
    if (this.options.retransmission?.(req)) return ADMIT;
    const source = this.options.admissionKey ? this.options.admissionKey(packetSource, (k) => req.header(k)) : packetSource;
    const now = this.options.clock.now();
    const until = this.blocked.get(source);
    if (until !== undefined) {
      if (until > now) return BLOCKED;
      this.blocked.delete(source);
    }
    const ua = req.header('user-agent');
    if (ua !== undefined && this.scanners.some((p) => p.test(ua))) return SCANNER;
    const b = this.bucket(source, now);
    const capacity = newCall ? this.options.capacity : undefined;
    const full = capacity?.room();
    if (full !== undefined) return this.refusal(b, nodeRefusals(full));
    if (b.tokens >= 1) {
      b.tokens -= 1;
      if (!newCall) return ADMIT;
      capacity?.take();
      return ADMIT_CALL;
    }
    return this.refusal(b, OVER_RATE);
  };

  /** 503 while the source has refusal tokens, else dropped (the source's refusal rate bounds our answers). */
  private refusal(b: Bucket, decision: AdmissionDecision): AdmissionDecision {
    if (b.refusals < 1) return OVER_REFUSALS;
    b.refusals -= 1;
    return decision;
  }

  /** After the parse, for new out-of-dialog requests: the global concurrency limit for INVITEs. */
  readonly verdict = (req: SipRequest, _flow: Flow): GuardVerdict => {
    if (req.method === 'INVITE' && this.options.concurrentCalls() >= (this.options.maxConcurrentCalls ?? 1000)) {
      countShed('refused', GLOBAL_LIMIT);
      return { action: 'reject', status: 503, headers: this.retryHeaders, why: GLOBAL_LIMIT };
    }
    return { action: 'accept' };
  };

  private bucket(source: string, now: number): Bucket {
    let b = this.buckets.get(source);
    if (!b) {
      if (this.buckets.size >= MAX_TRACKED_SOURCES) this.prune(now);
      b = { tokens: this.burst, refusals: this.refusalRate, at: now };
      this.buckets.set(source, b);
      return b;
    }
    const elapsed = (now - b.at) / 1000;
    if (elapsed > 0) {
      b.tokens = Math.min(this.burst, b.tokens + elapsed * this.rate);
      b.refusals = Math.min(this.refusalRate, b.refusals + elapsed * this.refusalRate);
      b.at = now;
    }
    return b;
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
