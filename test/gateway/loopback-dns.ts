import { createSocket, type Socket } from 'node:dgram';
import dnsPacket, { type Answer } from 'dns-packet';

/** Records by lower-case name and type, as dns-packet answers (only loopback addresses in tests). */
export type Zone = Record<string, Partial<Record<'A' | 'AAAA' | 'SRV' | 'NAPTR', Answer[]>>>;

/**
 * A small authoritative DNS server on 127.0.0.1 (UDP, random port) for RFC 3263 tests, with
 * `dns-packet` for the wire format. Unknown names get NXDOMAIN, known names without the asked
 * type an empty NOERROR answer (ENODATA to the client). Every question is logged.
 */
export class LoopbackDns {
  readonly queries: Array<{ name: string; type: string }> = [];
  /** When set, questions are logged and never answered (a dead DNS server). */
  silent = false;

  private constructor(
    private readonly socket: Socket,
    readonly port: number,
    public zone: Zone,
  ) {}

  static async start(zone: Zone): Promise<LoopbackDns> {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(0, '127.0.0.1', () => resolve());
    });
    const server = new LoopbackDns(socket, socket.address().port, zone);
    socket.on('message', (msg, rinfo) => server.answer(msg, rinfo.address, rinfo.port));
    return server;
  }

  get server(): string {
    return `127.0.0.1:${this.port}`;
  }

  private answer(msg: Buffer, address: string, port: number): void {
    let query: dnsPacket.Packet;
    try {
      query = dnsPacket.decode(msg);
    } catch {
      return;
    }
    const q = query.questions?.[0];
    if (!q) return;
    this.queries.push({ name: q.name.toLowerCase(), type: q.type });
    if (this.silent) return;
    const node = this.zone[q.name.toLowerCase()];
    const answers = node ? (node[q.type as 'A'] ?? []) : [];
    const reply = dnsPacket.encode({
      id: query.id,
      type: 'response',
      flags: dnsPacket.AUTHORITATIVE_ANSWER | (node ? 0 : 3), // rcode 3: NXDOMAIN
      questions: [q],
      answers,
    });
    this.socket.send(reply, port, address);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }
}

export const a = (name: string, data: string, ttl = 60): Answer => ({ type: 'A', name, ttl, class: 'IN', data });
export const aaaa = (name: string, data: string, ttl = 60): Answer => ({ type: 'AAAA', name, ttl, class: 'IN', data });
export const srv = (name: string, target: string, port: number, priority = 10, weight = 10): Answer => ({
  type: 'SRV', name, ttl: 60, class: 'IN', data: { target, port, priority, weight },
});
export const naptr = (name: string, order: number, preference: number, service: string, replacement: string): Answer => ({
  type: 'NAPTR', name, ttl: 60, class: 'IN', data: { order, preference, flags: 's', services: service, regexp: '', replacement },
});
