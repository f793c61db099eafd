import { lookup as systemLookup, Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import { systemClock, type Clock } from '../../../core/clock.js';
import type { Answer } from 'dns-packet';
import { DnsCache, type DnsAnswer, type DnsCacheOptions } from './dns-cache.js';
import { ServiceQuery, type ServiceType } from './dns-query.js';

/** Transports we can send on (RFC 3263 sec. 4.1 services SIP+D2U, SIP+D2T, SIPS+D2T). */
export type SipTransport = 'udp' | 'tcp' | 'tls';

/** One place to send a request, in the order RFC 3263 says to try them (sec. 4.3). */
export interface SipTarget {
  readonly address: string;
  readonly port: number;
  readonly transport: SipTransport;
  /** The name the address came from (SRV target or the host itself). */
  readonly name: string;
}

export interface ResolveRequest {
  /** Port from the URI; when given, only A/AAAA are looked up (sec. 4.2). */
  readonly port?: number;
  /** Transport from the URI (`transport=` or sips); when given, NAPTR/SRV are limited to it (sec. 4.1). */
  readonly transport?: SipTransport;
}

/** Anything that turns a SIP host into ordered targets (SipResolver, or a test double). */
export interface SipTargetResolver {
  resolve(host: string, request?: ResolveRequest): Promise<SipTarget[]>;
}

export interface SipResolverOptions {
  /** DNS servers (`127.0.0.1:5353` form); the system's when absent. */
  readonly servers?: readonly string[];
  /** Per-query timeout (Node's c-ares `timeout`), default 2000 ms. */
  readonly timeoutMs?: number;
  /** Attempts per server, default 2. */
  readonly tries?: number;
  /** Random source for SRV weights (tests fix it); `Math.random` by default. */
  readonly random?: () => number;
  /** Time for the answer cache (tests use a FakeClock). */
  readonly clock?: Clock;
  /** Cache bounds and negative TTLs (dns-cache.ts defaults: 1000 entries, 5 s, 30 s). */
  readonly cache?: Omit<DnsCacheOptions, 'clock'>;
  /**
   * How long a NAPTR or SRV answer is kept when its TTL is unknown, default 60 s: one too large for
   * UDP is fetched again through node:dns (TCP), which returns no TTL for these types.
   */
  readonly serviceTtlSeconds?: number;
}

export interface SrvRecord {
  readonly name: string;
  readonly port: number;
  readonly priority: number;
  readonly weight: number;
}

const SERVICES: Readonly<Record<string, SipTransport>> = { 'SIP+D2U': 'udp', 'SIP+D2T': 'tcp', 'SIPS+D2T': 'tls' };
const SRV_PREFIX: Readonly<Record<SipTransport, string>> = { udp: '_sip._udp', tcp: '_sip._tcp', tls: '_sips._tcp' };
export const defaultPort = (t: SipTransport): number => (t === 'tls' ? 5061 : 5060);

/**
 * RFC 2782 ordering: lowest priority first; within one priority, a weighted random draw without
 * replacement (zero-weight records first in the running sum so they keep a small chance).
 */
export function orderSrv(records: readonly SrvRecord[], random: () => number = Math.random): SrvRecord[] {
  const out: SrvRecord[] = [];
  const priorities = [...new Set(records.map((r) => r.priority))].sort((a, b) => a - b);
  for (const p of priorities) {
    const pool = records.filter((r) => r.priority === p).sort((a, b) => a.weight - b.weight);
    while (pool.length > 0) {
      const total = pool.reduce((sum, r) => sum + r.weight, 0);
      const pick = Math.floor(random() * (total + 1));
      let running = 0;
      let index = pool.findIndex((r) => (running += r.weight) >= pick);
      if (index < 0) index = pool.length - 1;
      out.push(...pool.splice(index, 1));
    }
  }
  return out;
}

const ABSENT = new Set(['ENODATA', 'ENOTFOUND', 'ENONAME', 'NOTFOUND']);
const FAILED = new Set(['EBADRESP', 'ESERVFAIL', 'EREFUSED', 'ETIMEOUT', 'ECONNREFUSED']);

/**
 * A lookup as a cacheable answer. No such record or name, and a server that fails or does not
 * answer, are ordinary steps in RFC 3263's fall-through (some resolvers drop NAPTR queries), not
 * errors; the cache keeps the two kinds for different times (RFC 2308 sec. 5, 7).
 */
async function answer<T>(lookup: () => Promise<readonly T[]>, ttlOf: (records: readonly T[]) => number): Promise<DnsAnswer<T>> {
  try {
    const records = await lookup();
    return records.length > 0 ? { records, ttlSeconds: ttlOf(records) } : { miss: 'absent' };
  } catch (error) {
    const code = (error as { code?: string }).code ?? '';
    if (ABSENT.has(code)) return { miss: 'absent' };
    if (FAILED.has(code)) return { miss: 'failed' };
    throw error;
  }
}

interface NaptrRecord {
  readonly flags: string;
  readonly service: string;
  readonly replacement: string;
  readonly order: number;
  readonly preference: number;
}

const naptrOf = (a: Answer): NaptrRecord | undefined =>
  a.type === 'NAPTR' ? { flags: a.data.flags, service: a.data.services, replacement: a.data.replacement, order: a.data.order, preference: a.data.preference } : undefined;
const srvOf = (a: Answer): SrvRecord | undefined =>
  a.type === 'SRV' ? { name: a.data.target, port: a.data.port, priority: a.data.priority ?? 0, weight: a.data.weight ?? 0 } : undefined;

/**
 * RFC 3263 sec. 4 for outgoing requests, on `node:dns`'s Resolver (c-ares) with configurable
 * servers: an IP literal is used as is; a name with a port gets A/AAAA only (sec. 4.2); otherwise
 * NAPTR (sec. 4.1: SIP+D2U/SIP+D2T/SIPS+D2T with flag "s", by order then preference, limited to a
 * transport given in the URI), else SRV for each transport we support (_sips._tcp, _sip._tcp,
 * _sip._udp, or only the given one), else A/AAAA on the default port. SRV targets are ordered by
 * priority and weight (RFC 2782) and each is expanded to its IPv4 then IPv6 addresses. The caller
 * tries the targets in order and moves on after a 503 or a transaction timeout (sec. 4.3).
 * Answers are cached for their TTL (dns-cache.ts). NAPTR and SRV are asked over UDP with
 * dns-packet (dns-query.ts), because node:dns does not return their TTL; A/AAAA on node:dns.
 */
export class SipResolver implements SipTargetResolver {
  private readonly dns: Resolver;
  private readonly random: () => number;
  private readonly cache: DnsCache;
  private readonly serviceTtl: number;
  private readonly serviceQuery: ServiceQuery;

  constructor(options: SipResolverOptions = {}) {
    this.dns = new Resolver({ timeout: options.timeoutMs ?? 2000, tries: options.tries ?? 2 });
    if (options.servers && options.servers.length > 0) this.dns.setServers([...options.servers]);
    this.random = options.random ?? Math.random;
    this.cache = new DnsCache({ ...options.cache, clock: options.clock ?? systemClock });
    this.serviceTtl = options.serviceTtlSeconds ?? 60;
    this.serviceQuery = new ServiceQuery({ ...(options.servers ? { servers: options.servers } : {}), timeoutMs: options.timeoutMs ?? 2000, tries: options.tries ?? 2 });
  }

  /** NAPTR/SRV with their TTL (dns-query.ts); an answer too large for UDP through node:dns instead. */
  private async service<T>(type: ServiceType, name: string, viaTcp: () => Promise<readonly T[]>, read: (a: Answer) => T | undefined): Promise<DnsAnswer<T>> {
    const r = await this.serviceQuery.query(type, name);
    if (r.kind === 'truncated') return answer(viaTcp, () => this.serviceTtl);
    if (r.kind !== 'answer') return { miss: r.kind };
    const records = r.answers.map(read).filter((x): x is T => x !== undefined);
    return records.length > 0 ? { records, ttlSeconds: r.ttlSeconds } : { miss: 'absent' };
  }

  async resolve(host: string, request: ResolveRequest = {}): Promise<SipTarget[]> {
    const bare = host.replace(/^\[|\]$/g, '');
    const transport = request.transport;
    if (isIP(bare)) return [{ address: bare, port: request.port ?? defaultPort(transport ?? 'udp'), transport: transport ?? 'udp', name: bare }];
    if (request.port !== undefined) return this.addresses(bare, request.port, transport ?? 'udp');
    const viaNaptr = await this.naptr(bare, transport);
    if (viaNaptr.length > 0) return viaNaptr;
    // Sec. 4.1: no usable NAPTR: SRV per transport we support (the given one only, when given).
    const wanted: SipTransport[] = transport ? [transport] : ['tls', 'tcp', 'udp'];
    for (const t of wanted) {
      const viaSrv = await this.srv(`${SRV_PREFIX[t]}.${bare}`, t);
      if (viaSrv.length > 0) return viaSrv;
    }
    return this.addresses(bare, defaultPort(transport ?? 'udp'), transport ?? 'udp');
  }

  private async naptr(host: string, transport: SipTransport | undefined): Promise<SipTarget[]> {
    const records = await this.cache.get('NAPTR', host, () => this.service('NAPTR', host, () => this.dns.resolveNaptr(host), naptrOf));
    const usable = records
      .filter((r) => r.flags.toLowerCase() === 's' && SERVICES[r.service.toUpperCase()] !== undefined && r.replacement !== '')
      .filter((r) => transport === undefined || SERVICES[r.service.toUpperCase()] === transport)
      .sort((a, b) => a.order - b.order || a.preference - b.preference);
    const out: SipTarget[] = [];
    for (const r of usable) out.push(...(await this.srv(r.replacement, SERVICES[r.service.toUpperCase()] as SipTransport)));
    return out;
  }

  private async srv(name: string, transport: SipTransport): Promise<SipTarget[]> {
    const records: readonly SrvRecord[] = await this.cache.get('SRV', name, () => this.service('SRV', name, () => this.dns.resolveSrv(name), srvOf));
    // RFC 2782: a single target "." means the service is decidedly not available here.
    const real = records.filter((r) => r.name !== '' && r.name !== '.');
    const out: SipTarget[] = [];
    for (const r of orderSrv(real, this.random)) out.push(...(await this.addresses(r.name, r.port, transport)));
    return out;
  }

  private async addresses(name: string, port: number, transport: SipTransport): Promise<SipTarget[]> {
    // A/AAAA come with their TTLs; the set is kept for the smallest one.
    const ttl = (records: ReadonlyArray<{ ttl: number }>): number => Math.min(...records.map((r) => r.ttl));
    const lookup = (family: 4 | 6): Promise<ReadonlyArray<{ address: string }>> =>
      this.cache.get(family === 4 ? 'A' : 'AAAA', name, () =>
        answer(() => (family === 4 ? this.dns.resolve4(name, { ttl: true }) : this.dns.resolve6(name, { ttl: true })), ttl),
      );
    const [v4, v6] = await Promise.all([lookup(4), lookup(6)]);
    if (v4.length + v6.length > 0) return [...v4, ...v6].map(({ address }) => ({ address, port, transport, name }));
    return this.hostsFile(name, port, transport);
  }

  /**
   * c-ares asks DNS only; a name that only /etc/hosts knows (compose `extra_hosts`, Kubernetes
   * `hostAliases`) still resolves through getaddrinfo, as trunk hosts did before RFC 3263 lookups.
   */
  private async hostsFile(name: string, port: number, transport: SipTransport): Promise<SipTarget[]> {
    try {
      const found = await systemLookup(name, { all: true });
      return found.sort((a, b) => a.family - b.family).map(({ address }) => ({ address, port, transport, name }));
    } catch {
      return [];
    }
  }
}
