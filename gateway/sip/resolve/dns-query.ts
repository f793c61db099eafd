import { randomInt } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { getServers } from 'node:dns';
import { isIP } from 'node:net';
import dnsPacket, { type Answer, type DecodedPacket } from 'dns-packet';

/** The two RFC 3263 record types whose TTL node:dns does not return. */
export type ServiceType = 'NAPTR' | 'SRV';

export type QueryResult =
  | { readonly kind: 'answer'; readonly answers: readonly Answer[]; readonly ttlSeconds: number }
  | { readonly kind: 'absent' }
  | { readonly kind: 'failed' }
  /** The UDP answer did not fit (TC bit); the caller asks again over TCP (c-ares). */
  | { readonly kind: 'truncated' };

export interface DnsQueryOptions {
  /** `host`, `host:port`, `[v6]:port`; the system's (resolv.conf) when absent. */
  readonly servers?: readonly string[];
  readonly timeoutMs: number;
  /** Rounds over the server list. */
  readonly tries: number;
}

const RCODE_NXDOMAIN = 3;

function parseServer(text: string): { host: string; port: number } {
  if (isIP(text)) return { host: text, port: 53 };
  const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(text) ?? /^([^:]+):(\d+)$/.exec(text);
  return m ? { host: m[1] as string, port: m[2] ? Number(m[2]) : 53 } : { host: text, port: 53 };
}

/**
 * One DNS question over UDP with dns-packet (RFC 1035 sec. 4.2.1), only for NAPTR and SRV: the
 * answer's TTLs, which node:dns drops for these types, decide how long the resolver caches them.
 * Servers are asked in turn for `tries` rounds, each with `timeoutMs`. A reply counts only when it
 * comes from the server asked, carries our random ID and repeats our question (RFC 5452 sec. 9.1),
 * so a spoofed datagram is ignored rather than trusted.
 */
export class ServiceQuery {
  private readonly servers: ReadonlyArray<{ host: string; port: number }>;

  constructor(private readonly options: DnsQueryOptions) {
    const list = options.servers && options.servers.length > 0 ? options.servers : getServers();
    this.servers = list.map(parseServer);
  }

  async query(type: ServiceType, name: string): Promise<QueryResult> {
    for (let round = 0; round < Math.max(1, this.options.tries); round++) {
      for (const server of this.servers) {
        const reply = await this.ask(server, type, name);
        if (!reply) continue; // timed out: next server
        if (reply.flag_tc) return { kind: 'truncated' };
        const rcode = (reply.flags ?? 0) & 0xf;
        if (rcode === RCODE_NXDOMAIN) return { kind: 'absent' };
        if (rcode !== 0) continue; // SERVFAIL, REFUSED...: another server may do better
        const answers = (reply.answers ?? []).filter((a) => a.type === type);
        if (answers.length === 0) return { kind: 'absent' };
        return { kind: 'answer', answers, ttlSeconds: Math.min(...answers.map((a) => ('ttl' in a && typeof a.ttl === 'number' ? a.ttl : 0))) };
      }
    }
    return { kind: 'failed' };
  }

  private ask(server: { host: string; port: number }, type: ServiceType, name: string): Promise<DecodedPacket | undefined> {
    const id = randomInt(0, 65536);
    const socket = createSocket(isIP(server.host) === 6 ? 'udp6' : 'udp4');
    return new Promise<DecodedPacket | undefined>((resolve) => {
      const done = (reply: DecodedPacket | undefined): void => {
        clearTimeout(timer);
        socket.close();
        resolve(reply);
      };
      const timer = setTimeout(() => done(undefined), this.options.timeoutMs);
      socket.on('error', () => done(undefined));
      socket.on('message', (msg, from) => {
        if (from.port !== server.port || from.address !== server.host) return;
        let reply: DecodedPacket;
        try {
          reply = dnsPacket.decode(msg);
        } catch {
          return;
        }
        const q = reply.questions?.[0];
        if (reply.id !== id || reply.type !== 'response' || q?.type !== type || q.name.toLowerCase() !== name.toLowerCase()) return;
        done(reply);
      });
      const packet = dnsPacket.encode({ type: 'query', id, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type, name }] });
      socket.send(packet, server.port, server.host, (error) => {
        if (error) done(undefined);
      });
    });
  }
}
