import { createServer as createTcpServer, isIP, connect as tcpConnect, type Server, type Socket } from 'node:net';
import { connect as tlsConnect, createServer as createTlsServer, type SecureContextOptions } from 'node:tls';
import { SipParseError } from '../message/errors.js';
import type { SipMessage } from '../message/message.js';
import { serialize } from '../message/serializer.js';
import { StreamFramer, type FramerLimits } from '../message/stream-framer.js';
import type { ReceiveGate } from './receive-gate.js';
import type { Endpoint, Flow, SipTransport, TransportListener } from './types.js';

export interface StreamOptions {
  readonly host: string;
  readonly port: number;
  /** Closed after this long without traffic in either direction (RFC 3261 sec. 18.3 leaves it to us). */
  readonly idleTimeoutMs?: number;
  /** Accepted plus opened connections; further accepts are refused so memory stays bounded. */
  readonly maxConnections?: number;
  /** A peer that stops reading: past this many queued bytes the connection is dropped. */
  readonly maxQueuedBytes?: number;
  readonly framer?: FramerLimits;
  /** TLS server credentials; absent means plain TCP. */
  readonly tls?: SecureContextOptions;
  /** For outgoing TLS connections: false accepts any certificate (never the default). */
  readonly rejectUnauthorized?: boolean;
  /**
   * CAs trusted for outgoing TLS instead of Node's store (tests with a self-signed peer); the
   * platform uses Node's store plus NODE_EXTRA_CA_CERTS.
   */
  readonly trustedCa?: Buffer;
  /** Admission of each framed request (receive-gate.ts). */
  readonly gate?: ReceiveGate;
}

const key = (e: Endpoint): string => `${e.address.toLowerCase()}|${e.port}${e.serverName ? `|${e.serverName.toLowerCase()}` : ''}`;

const normalise = (address: string | undefined): string => (address ?? '').replace(/^::ffff:/, '');

/**
 * TCP and TLS (RFC 3261 sec. 18.3, 26.2): each connection frames its byte stream with the
 * StreamFramer; responses go back on the connection the request came in on (sec. 18.2.2) and
 * new requests reuse an open connection to the same address (sec. 18.1.1), including the
 * sent-by of a peer that asked for it with Via `alias` (RFC 5923 sec. 5, without the TLS
 * certificate check that sec. 6 wants for aliases over TLS: we alias plain TCP only).
 */
export class StreamTransport implements SipTransport {
  readonly name: 'TCP' | 'TLS';
  private readonly server: Server;
  private readonly connections = new Map<string, Connection>();
  private readonly all = new Set<Connection>();
  private localEndpoint: Endpoint = { address: '', port: 0 };

  private constructor(
    private readonly options: StreamOptions,
    private readonly listener: TransportListener,
  ) {
    this.name = options.tls ? 'TLS' : 'TCP';
    const accept = (socket: Socket): void => {
      this.adopt(socket);
    };
    this.server = options.tls ? createTlsServer({ ...options.tls }, accept) : createTcpServer(accept);
    this.server.maxConnections = options.maxConnections ?? 10_000;
    // A failed TLS handshake is the peer's problem, not ours.
    this.server.on('tlsClientError', () => undefined);
  }

  static async listen(options: StreamOptions, listener: TransportListener): Promise<StreamTransport> {
    const t = new StreamTransport(options, listener);
    await new Promise<void>((resolve, reject) => {
      t.server.once('error', reject);
      t.server.listen({ port: options.port, host: options.host, exclusive: true }, () => {
        t.server.off('error', reject);
        resolve();
      });
    });
    // After listening, an accept failure (EMFILE...) must not take the process down.
    t.server.on('error', () => undefined);
    const addr = t.server.address();
    if (addr && typeof addr === 'object') t.localEndpoint = { address: options.host, port: addr.port };
    return t;
  }

  get local(): Endpoint {
    return this.localEndpoint;
  }

  get connectionCount(): number {
    return this.all.size;
  }

  private adopt(socket: Socket, remoteOverride?: Endpoint, connectEvent?: 'connect' | 'secureConnect'): Connection {
    const remote = remoteOverride ?? { address: normalise(socket.remoteAddress), port: socket.remotePort ?? 0 };
    const conn = new Connection(this, socket, remote, this.options, this.listener, connectEvent);
    this.all.add(conn);
    this.connections.set(key(remote), conn);
    socket.once('close', () => {
      this.all.delete(conn);
      for (const [k, c] of this.connections) if (c === conn) this.connections.delete(k);
    });
    return conn;
  }

  /** RFC 5923: the peer's Via sent-by now also names this connection. */
  alias(conn: Connection, sentBy: Endpoint): void {
    if (this.name === 'TCP' && conn.open) this.connections.set(key(sentBy), conn);
  }

  flowTo(target: Endpoint): Flow {
    const existing = this.connections.get(key(target));
    if (existing?.open) return existing.flow;
    const socket = this.options.tls
      ? tlsConnect({
          host: target.address,
          port: target.port,
          // SNI and the name the certificate must carry (Node checks `servername` when given).
          ...(target.serverName && isIP(target.serverName) === 0 ? { servername: target.serverName } : {}),
          rejectUnauthorized: this.options.rejectUnauthorized ?? true,
          ...(this.options.trustedCa ? { ca: this.options.trustedCa } : {}),
        })
      : tcpConnect({ host: target.address, port: target.port });
    // Writes before the connect completes are buffered by the socket.
    return this.adopt(socket, target, this.options.tls ? 'secureConnect' : 'connect').flow;
  }

  async close(): Promise<void> {
    for (const c of this.all) c.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

export class Connection {
  readonly flow: Flow;
  private readonly framer: StreamFramer;
  private closed = false;
  /** Senders on a connection of ours that is not yet up (TCP connect, TLS handshake): told if it never comes up. */
  private waiting: Array<(error: Error) => void> | undefined;
  private failure: Error | undefined;

  constructor(
    private readonly owner: StreamTransport,
    private readonly socket: Socket,
    remote: Endpoint,
    options: StreamOptions,
    listener: TransportListener,
    /** Set for a connection we open: the event that says it is up. */
    connectEvent?: 'connect' | 'secureConnect',
  ) {
    this.framer = new StreamFramer(options.framer);
    const maxQueued = options.maxQueuedBytes ?? 1024 * 1024;
    const local = { address: normalise(socket.localAddress), port: socket.localPort ?? 0 };
    const isOpen = (): boolean => !this.closed;
    this.flow = {
      transport: owner.name,
      reliable: true,
      secure: owner.name === 'TLS',
      local,
      remote,
      get open() {
        return isOpen();
      },
      send: (message: SipMessage, onLateFailure?: (error: Error) => void) => {
        if (this.closed) throw new Error(`connection to ${remote.address}:${remote.port} is closed`);
        if (socket.writableLength > maxQueued) {
          this.destroy();
          throw new Error('peer is not reading: connection dropped');
        }
        if (onLateFailure && this.waiting) this.waiting.push(onLateFailure);
        // A TLS write queued before the handshake reports no error when the handshake fails: the
        // waiting list covers that; the callback covers a write on an established connection.
        socket.write(serialize(message), onLateFailure && !this.waiting ? (e) => e && onLateFailure(e) : undefined);
      },
    };
    if (connectEvent) {
      this.waiting = [];
      socket.once(connectEvent, () => (this.waiting = undefined));
    }
    socket.setNoDelay(true);
    socket.setTimeout(options.idleTimeoutMs ?? 10 * 60_000, () => this.destroy());
    socket.on('error', (error) => {
      this.failure ??= error;
      this.destroy();
    });
    socket.on('close', () => {
      this.closed = true;
      const waiting = this.waiting;
      this.waiting = undefined;
      const error = this.failure ?? new Error(`connection to ${remote.address}:${remote.port} closed before it was up`);
      for (const tell of waiting ?? []) tell(error);
    });
    socket.on('data', (chunk: Buffer) => {
      let items;
      try {
        items = this.framer.push(chunk);
      } catch (error) {
        // Framing lost (sec. 18.3): answer what can be answered, let it flush, then close.
        if (error instanceof SipParseError) listener({ kind: 'invalid', error, flow: this.flow });
        this.closed = true;
        socket.end();
        setTimeout(() => socket.destroy(), 1000).unref();
        return;
      }
      for (const item of items) {
        if (item.kind === 'ping') socket.write('\r\n');
        else if (item.kind === 'invalid') listener({ kind: 'invalid', error: item.error, flow: this.flow });
        else {
          const via = item.message.isRequest ? safeTopVia(item.message) : undefined;
          if (via?.alias) this.owner.alias(this, via.sentBy);
          if (options.gate && !options.gate.message(item.message, this.flow)) continue;
          listener({ kind: 'message', message: item.message, flow: this.flow });
        }
      }
    });
  }

  get open(): boolean {
    return !this.closed;
  }

  destroy(): void {
    this.closed = true;
    this.socket.destroy();
  }
}

function safeTopVia(message: SipMessage): { alias: boolean; sentBy: Endpoint } | undefined {
  try {
    const v = message.topVia;
    return { alias: v.params.has('alias'), sentBy: { address: v.host.replace(/^\[|\]$/g, ''), port: v.port ?? 5060 } };
  } catch {
    return undefined;
  }
}
