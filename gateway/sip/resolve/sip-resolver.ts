import { lookup as systemLookup, Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';

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

/** No such record or name: an ordinary answer in RFC 3263's fall-through, not a failure. */
const absent = (error: unknown): boolean => {
  const code = (error as { code?: string }).code;
  return code === 'ENODATA' || code === 'ENOTFOUND' || code === 'ENONAME' || code === 'NOTFOUND' || code === 'EBADRESP' || code === 'ESERVFAIL' || code === 'EREFUSED' || code === 'ETIMEOUT' || code === 'ECONNREFUSED';
};

/**
 * RFC 3263 sec. 4 for outgoing requests, on `node:dns`'s Resolver (c-ares) with configurable
 * servers: an IP literal is used as is; a name with a port gets A/AAAA only (sec. 4.2); otherwise
 * NAPTR (sec. 4.1: SIP+D2U/SIP+D2T/SIPS+D2T with flag "s", by order then preference, limited to a
 * transport given in the URI), else SRV for each transport we support (_sips._tcp, _sip._tcp,
 * _sip._udp, or only the given one), else A/AAAA on the default port. SRV targets are ordered by
 * priority and weight (RFC 2782) and each is expanded to its IPv4 then IPv6 addresses. The caller
 * tries the targets in order and moves on after a 503 or a transaction timeout (sec. 4.3).
 */
export class SipResolver implements SipTargetResolver {
  private readonly dns: Resolver;
  private readonly random: () => number;

  constructor(options: SipResolverOptions = {}) {
    this.dns = new Resolver({ timeout: options.timeoutMs ?? 2000, tries: options.tries ?? 2 });
    if (options.servers && options.servers.length > 0) this.dns.setServers([...options.servers]);
    this.random = options.random ?? Math.random;
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
    let records: Awaited<ReturnType<Resolver['resolveNaptr']>>;
    try {
      records = await this.dns.resolveNaptr(host);
    } catch (error) {
      if (absent(error)) return [];
      throw error;
    }
    const usable = records
      .filter((r) => r.flags.toLowerCase() === 's' && SERVICES[r.service.toUpperCase()] !== undefined && r.replacement !== '')
      .filter((r) => transport === undefined || SERVICES[r.service.toUpperCase()] === transport)
      .sort((a, b) => a.order - b.order || a.preference - b.preference);
    const out: SipTarget[] = [];
    for (const r of usable) out.push(...(await this.srv(r.replacement, SERVICES[r.service.toUpperCase()] as SipTransport)));
    return out;
  }

  private async srv(name: string, transport: SipTransport): Promise<SipTarget[]> {
    let records: SrvRecord[];
    try {
      records = await this.dns.resolveSrv(name);
    } catch (error) {
      if (absent(error)) return [];
      throw error;
    }
    // RFC 2782: a single target "." means the service is decidedly not available here.
    const real = records.filter((r) => r.name !== '' && r.name !== '.');
    const out: SipTarget[] = [];
    for (const r of orderSrv(real, this.random)) out.push(...(await this.addresses(r.name, r.port, transport)));
    return out;
  }

  private async addresses(name: string, port: number, transport: SipTransport): Promise<SipTarget[]> {
    const lookup = async (family: 4 | 6): Promise<string[]> => {
      try {
        return family === 4 ? await this.dns.resolve4(name) : await this.dns.resolve6(name);
      } catch (error) {
        if (absent(error)) return [];
        throw error;
      }
    };
    const [v4, v6] = await Promise.all([lookup(4), lookup(6)]);
    if (v4.length + v6.length > 0) return [...v4, ...v6].map((address) => ({ address, port, transport, name }));
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
