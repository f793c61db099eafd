import { createSocket, type Socket } from 'node:dgram';
import { lookup as dnsLookup, type LookupOneOptions } from 'node:dns';
import { isIP, isIPv6 } from 'node:net';
import { SipParseError } from '../message/errors.js';
import type { SipMessage } from '../message/message.js';
import { parseDatagram } from '../message/parser.js';
import { serialize } from '../message/serializer.js';
import type { ReceiveGate } from './receive-gate.js';
import type { DatagramIntake } from './receive-lanes.js';
import type { Endpoint, Flow, SipTransport, TransportListener } from './types.js';
import { udpReceiveDrops } from './udp-drops.js';

export interface UdpOptions {
  readonly host: string;
  readonly port: number;
  /**
   * SO_RCVBUF asked for (4 MiB by default): a burst must wait in the kernel, not be dropped, while
   * the loop is busy. Linux caps it at net.core.rmem_max; `receiveBufferBytes` tells what was given.
   */
  readonly receiveBufferBytes?: number;
  /** Admission before parsing (receive-gate.ts); without it every datagram is parsed at once. */
  readonly gate?: ReceiveGate;
}

const bindSocket = (socket: Socket, port: number, address: string): Promise<void> =>
  new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.bind({ port, address, exclusive: true }, () => {
      socket.off('error', reject);
      resolve();
    });
  });

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string, family: number) => void;

/**
 * dgram resolves the destination of every send, and `dns.lookup` answers even an IP literal on
 * the next tick: a deferred callback and closure per datagram. We only send to literals (RFC
 * 3263 resolution happens before a flow exists), so those are answered at once.
 */
function literalFirstLookup(hostname: string, options: number | LookupOneOptions, callback: LookupCallback): void {
  const family = isIP(hostname);
  if (family !== 0) callback(null, hostname, family);
  else dnsLookup(hostname, typeof options === 'number' ? { family: options } : options, callback);
}

const DEFAULT_RECEIVE_BUFFER = 4 * 1024 * 1024;

/** Flows are immutable, so one per peer is shared by its datagrams; bounded against address scans. */
const MAX_CACHED_FLOWS = 4096;

/** A UDP socket and a peer, shared by the datagrams of that peer; its send is a prototype method, not a closure. */
class UdpFlow implements Flow {
  readonly transport = 'UDP' as const;
  readonly reliable = false;
  readonly secure = false;
  readonly open = true;

  constructor(
    readonly socket: Socket,
    readonly local: Endpoint,
    readonly remote: Endpoint,
  ) {}

  send(message: SipMessage): void {
    this.socket.send(serialize(message), this.remote.port, this.remote.address);
  }

  sendWire(wire: Buffer): void {
    this.socket.send(wire, this.remote.port, this.remote.address);
  }
}

/** A refusal leaves from the socket the request reached, to its source address (receive-gate.ts). */
const replyOnSocket = (wire: Buffer, port: number, flow: Flow): void => {
  (flow as UdpFlow).socket.send(wire, port, flow.remote.address);
};

/**
 * UDP: one socket per address family (RFC 3261 sec. 18.1, 18.2). A wildcard host binds both
 * 0.0.0.0 and [::] (v6-only) on the same port, so responses leave from the address the request
 * reached, as sec. 18.2.2 expects from a single socket per family.
 */
export class UdpTransport implements SipTransport {
  readonly name = 'UDP' as const;
  private readonly sockets = new Map<'udp4' | 'udp6', Socket>();
  private localEndpoint: Endpoint = { address: '', port: 0 };
  private readonly flows = new Map<string, UdpFlow>();
  /** The last flow used: most datagrams come from the peer of the one before (a trunk, SIPp). */
  private lastFlow: UdpFlow | undefined;
  private intake: DatagramIntake | undefined;

  private constructor(private readonly listener: TransportListener) {}

  static async listen(options: UdpOptions, listener: TransportListener): Promise<UdpTransport> {
    const t = new UdpTransport(listener);
    t.intake = options.gate?.intake(t.parse);
    const families: Array<['udp4' | 'udp6', string]> =
      options.host === '0.0.0.0' || options.host === '::'
        ? [['udp4', '0.0.0.0'], ['udp6', '::']]
        : [[isIPv6(options.host) ? 'udp6' : 'udp4', options.host]];
    let port = options.port;
    for (const [family, address] of families) {
      const socket = createSocket({ type: family, ipv6Only: family === 'udp6', reuseAddr: false, lookup: literalFirstLookup });
      try {
        await bindSocket(socket, port, address);
      } catch (error) {
        socket.close();
        // No IPv6 on this host: serve IPv4 only rather than fail the role.
        if (family === 'udp6' && t.sockets.size > 0) continue;
        await t.close();
        throw error;
      }
      port = socket.address().port;
      try {
        // Not dgram's recvBufferSize option: where the kernel refuses the size (macOS beyond
        // kern.ipc.maxsockbuf) it throws inside the bind callback. Linux caps it silently.
        socket.setRecvBufferSize(options.receiveBufferBytes ?? DEFAULT_RECEIVE_BUFFER);
      } catch {
        // The default buffer still works; receiveBufferBytes reports what there is.
      }
      socket.on('message', (buf, rinfo) => t.receive(socket, family, buf, rinfo));
      // ICMP errors surface here on some platforms; one failed peer must not stop the socket.
      socket.on('error', () => undefined);
      t.sockets.set(family, socket);
      if (t.localEndpoint.port === 0) t.localEndpoint = { address, port };
    }
    return t;
  }

  get local(): Endpoint {
    return this.localEndpoint;
  }

  /**
   * The receive buffer the kernel gave (the smallest over the sockets), in the bytes asked for:
   * Linux reports twice the usable size (its bookkeeping share), so that is halved back.
   */
  get receiveBufferBytes(): number {
    let least = Infinity;
    for (const socket of this.sockets.values()) {
      try {
        least = Math.min(least, socket.getRecvBufferSize() / (process.platform === 'linux' ? 2 : 1));
      } catch {
        // A closed socket has none.
      }
    }
    return Number.isFinite(least) ? least : 0;
  }

  /** Datagrams the kernel dropped on these sockets for a full receive buffer (Linux; udp-drops.ts). */
  get kernelDrops(): number | undefined {
    let total: number | undefined;
    for (const socket of this.sockets.values()) {
      try {
        const { address, port } = socket.address();
        const n = udpReceiveDrops(address, port);
        if (n !== undefined) total = (total ?? 0) + n;
      } catch {
        // Closed.
      }
    }
    return total;
  }

  private receive(socket: Socket, family: 'udp4' | 'udp6', buf: Buffer, remote: Endpoint): void {
    // RFC 5626 sec. 4.4.2 / 3261 sec. 7.5: a bare CRLF keep-alive carries no message.
    if (buf.length <= 4 && buf.every((b) => b === 13 || b === 10)) return;
    const flow = this.flow(socket, family, remote.address, remote.port);
    if (this.intake) this.intake.receive(buf, flow, replyOnSocket);
    else this.parse(buf, flow);
  }

  private readonly parse = (buf: Buffer, flow: Flow): void => {
    let message: SipMessage;
    try {
      message = parseDatagram(buf);
    } catch (error) {
      if (error instanceof SipParseError) this.listener({ kind: 'invalid', error, flow });
      return;
    }
    this.listener({ kind: 'message', message, flow });
  };

  private flow(socket: Socket, family: 'udp4' | 'udp6', address: string, port: number): Flow {
    const last = this.lastFlow;
    if (last !== undefined && last.remote.port === port && last.remote.address === address && last.socket === socket) return last;
    const key = `${address}|${port}`;
    let flow = this.flows.get(key);
    if (flow === undefined || flow.socket !== socket) {
      const local = family === 'udp6' ? { address: '::', port: this.localEndpoint.port } : this.localEndpoint;
      flow = new UdpFlow(socket, local, { address, port });
      if (this.flows.size >= MAX_CACHED_FLOWS) this.flows.clear();
      this.flows.set(key, flow);
    }
    this.lastFlow = flow;
    return flow;
  }

  flowTo(target: Endpoint): Flow {
    const family = isIPv6(target.address) ? 'udp6' : 'udp4';
    const socket = this.sockets.get(family);
    if (!socket) throw new Error(`no ${family} socket for ${target.address}`);
    return this.flow(socket, family, target.address, target.port);
  }

  async close(): Promise<void> {
    this.intake?.stop();
    await Promise.all([...this.sockets.values()].map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    this.sockets.clear();
  }
}
