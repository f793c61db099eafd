import { createSocket, type Socket } from 'node:dgram';
import { createServer, type Server, type Socket as TcpSocket } from 'node:net';
import dnsPacket, { type Answer } from 'dns-packet';

/** Records by lower-case name and type, as dns-packet answers (only loopback addresses in tests). */
export type Zone = Record<string, Partial<Record<'A' | 'AAAA' | 'SRV' | 'NAPTR', Answer[]>>>;

/**
 * A small authoritative DNS server on 127.0.0.1 (UDP and TCP on one random port) for RFC 3263
 * tests, with `dns-packet` for the wire format. Unknown names get NXDOMAIN, known names without the
 * asked type an empty NOERROR answer (ENODATA to the client). Every question is logged.
 */
export class LoopbackDns {
  readonly queries: Array<{ name: string; type: string; transport: 'udp' | 'tcp' }> = [];
  /** When set, questions are logged and never answered (a dead DNS server). */
  silent = false;
  /** Names whose UDP answers come back empty with the TC bit (too large for UDP): the client must use TCP. */
  readonly truncate = new Set<string>();
  private readonly connections = new Set<TcpSocket>();

  private constructor(
    private readonly socket: Socket,
    private readonly tcp: Server,
    readonly port: number,
    public zone: Zone,
  ) {}

  static async start(zone: Zone): Promise<LoopbackDns> {
    for (let attempt = 0; ; attempt++) {
      const socket = createSocket('udp4');
      await new Promise<void>((resolve, reject) => {
        socket.once('error', reject);
        socket.bind(0, '127.0.0.1', () => resolve());
      });
      const port = socket.address().port;
      const tcp = createServer();
      const listening = await new Promise<boolean>((resolve) => {
        tcp.once('error', () => resolve(false));
        tcp.listen(port, '127.0.0.1', () => resolve(true));
      });
      if (!listening) {
        socket.close();
        if (attempt < 5) continue;
        throw new Error('no port free for both UDP and TCP');
      }
      const server = new LoopbackDns(socket, tcp, port, zone);
      socket.on('message', (msg, rinfo) => {
        const reply = server.answer(msg, 'udp');
        if (reply) socket.send(reply, rinfo.port, rinfo.address);
      });
      tcp.on('connection', (conn) => {
        server.connections.add(conn);
        conn.on('close', () => server.connections.delete(conn));
        let buffered = Buffer.alloc(0);
        conn.on('error', () => conn.destroy());
        conn.on('data', (chunk) => {
          buffered = Buffer.concat([buffered, chunk]);
          // RFC 1035 sec. 4.2.2: each message is prefixed by its two-byte length.
          while (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
            const msg = buffered.subarray(2, 2 + buffered.readUInt16BE(0));
            buffered = buffered.subarray(2 + msg.length);
            const reply = server.answer(msg, 'tcp');
            if (reply) conn.write(Buffer.concat([Buffer.from([reply.length >> 8, reply.length & 255]), reply]));
          }
        });
      });
      return server;
    }
  }

  get server(): string {
    return `127.0.0.1:${this.port}`;
  }

  private answer(msg: Buffer, transport: 'udp' | 'tcp'): Buffer | undefined {
    let query: dnsPacket.Packet;
    try {
      query = dnsPacket.decode(msg);
    } catch {
      return undefined;
    }
    const q = query.questions?.[0];
    if (!q) return undefined;
    const name = q.name.toLowerCase();
    this.queries.push({ name, type: q.type, transport });
    if (this.silent) return undefined;
    const node = this.zone[name];
    const truncated = transport === 'udp' && this.truncate.has(name);
    const answers = node && !truncated ? (node[q.type as 'A'] ?? []) : [];
    return dnsPacket.encode({
      id: query.id,
      type: 'response',
      flags: dnsPacket.AUTHORITATIVE_ANSWER | (truncated ? dnsPacket.TRUNCATED_RESPONSE : 0) | (node ? 0 : 3), // rcode 3: NXDOMAIN
      questions: [q],
      answers,
    });
  }

  async close(): Promise<void> {
    for (const conn of this.connections) conn.destroy();
    await new Promise<void>((resolve) => this.tcp.close(() => resolve()));
    await new Promise<void>((resolve) => this.socket.close(() => resolve()));
  }
}

export const a = (name: string, data: string, ttl = 60): Answer => ({ type: 'A', name, ttl, class: 'IN', data });
export const aaaa = (name: string, data: string, ttl = 60): Answer => ({ type: 'AAAA', name, ttl, class: 'IN', data });
export const srv = (name: string, target: string, port: number, priority = 10, weight = 10, ttl = 60): Answer => ({
  type: 'SRV', name, ttl, class: 'IN', data: { target, port, priority, weight },
});
export const naptr = (name: string, order: number, preference: number, service: string, replacement: string, ttl = 60): Answer => ({
  type: 'NAPTR', name, ttl, class: 'IN', data: { order, preference, flags: 's', services: service, regexp: '', replacement },
});
