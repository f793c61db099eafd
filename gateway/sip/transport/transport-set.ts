import type { SecureContextOptions } from 'node:tls';
import { ListenError, listening } from '../../../core/errors.js';
import type { ReceiveGate } from './receive-gate.js';
import { StreamTransport } from './stream.js';
import type { Endpoint, Flow, SipTransport, TransportListener, TransportName } from './types.js';
import { UdpTransport } from './udp.js';
import { WebSocketTransport } from './websocket.js';

export interface TransportSetOptions {
  readonly host: string;
  /** UDP and TCP share it (RFC 3261 sec. 18.2.1: a server listens on both); 0 picks a free one. */
  readonly port: number;
  /** TCP port when it must differ from the UDP one (tests binding port 0 for each). */
  readonly tcpPort?: number;
  readonly tlsPort?: number;
  readonly wsPort?: number;
  readonly wssPort?: number;
  readonly tls?: SecureContextOptions;
  readonly idleTimeoutMs?: number;
  readonly receiveBufferBytes?: number;
  /** Per-source admission before the stack (receive-gate.ts), on every transport. */
  readonly gate?: ReceiveGate;
  /** Header and whole-request timeouts of the WebSocket upgrade (config `http.*`). */
  readonly http?: { readonly headersTimeoutMs: number; readonly requestTimeoutMs: number };
}

/** Every listening transport, and the choice of one for an outgoing request (RFC 3263 light). */
export class TransportSet {
  private constructor(private readonly byName: ReadonlyMap<TransportName, SipTransport>) {}

  static async start(options: TransportSetOptions, listener: TransportListener): Promise<TransportSet> {
    const started = new Map<TransportName, SipTransport>();
    // A listen/bind failure names the transport and port (core/errors.ts ListenError).
    const open = <T>(name: TransportName, port: number, start: () => Promise<T>): Promise<T> => listening(`SIP ${name}`, options.host, port, start);
    try {
      const common = { host: options.host, idleTimeoutMs: options.idleTimeoutMs, gate: options.gate };
      const openUdp = (): Promise<UdpTransport> =>
        open('UDP', options.port, () => UdpTransport.listen({ host: options.host, port: options.port, receiveBufferBytes: options.receiveBufferBytes, gate: options.gate }, listener));
      // Port 0: the kernel picks a free UDP port, and the same number may be taken for TCP (an
      // outgoing connection's local port, say). Then another UDP port is tried, never a split pair.
      const shared = options.port === 0 && options.tcpPort === undefined;
      for (let attempt = 1; ; attempt++) {
        const udp = await openUdp();
        started.set('UDP', udp);
        const tcpPort = options.tcpPort ?? udp.local.port;
        try {
          started.set('TCP', await open('TCP', tcpPort, () => StreamTransport.listen({ ...common, port: tcpPort }, listener)));
          break;
        } catch (error) {
          const inUse = error instanceof ListenError && error.code === 'EADDRINUSE';
          if (!shared || !inUse || attempt >= 20) throw error;
          started.delete('UDP');
          await udp.close();
        }
      }
      if (options.tls && options.tlsPort !== undefined) {
        const { tls, tlsPort } = options;
        started.set('TLS', await open('TLS', tlsPort, () => StreamTransport.listen({ ...common, port: tlsPort, tls }, listener)));
      }
      const ws = { ...common, ...options.http };
      if (options.wsPort !== undefined) {
        const { wsPort } = options;
        started.set('WS', await open('WS', wsPort, () => WebSocketTransport.listen({ ...ws, port: wsPort }, listener)));
      }
      if (options.tls && options.wssPort !== undefined) {
        const { tls, wssPort } = options;
        started.set('WSS', await open('WSS', wssPort, () => WebSocketTransport.listen({ ...ws, port: wssPort, tls }, listener)));
      }
    } catch (error) {
      await Promise.allSettled([...started.values()].map((t) => t.close()));
      throw error;
    }
    return new TransportSet(started);
  }

  get(name: TransportName): SipTransport | undefined {
    return this.byName.get(name);
  }

  /** Bound ports by transport, e.g. for logs and tests that bind port 0. */
  get ports(): Partial<Record<TransportName, number>> {
    const out: Partial<Record<TransportName, number>> = {};
    for (const [n, t] of this.byName) out[n] = t.local.port;
    return out;
  }

  flowTo(transport: string, target: Endpoint): Flow {
    const t = this.byName.get(transport.toUpperCase() as TransportName);
    if (!t) throw new Error(`transport ${transport} is not enabled`);
    return t.flowTo(target);
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.byName.values()].map((t) => t.close()));
  }
}
