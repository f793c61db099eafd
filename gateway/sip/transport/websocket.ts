import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { SecureContextOptions } from 'node:tls';
import { WebSocketServer, type WebSocket } from 'ws';
import { SipParseError } from '../message/errors.js';
import { parseDatagram } from '../message/parser.js';
import { serialize } from '../message/serializer.js';
import type { ReceiveGate } from './receive-gate.js';
import type { Endpoint, Flow, SipTransport, TransportListener } from './types.js';

export interface WebSocketOptions {
  readonly host: string;
  readonly port: number;
  /** Present: WSS (TLS); absent: WS. */
  readonly tls?: SecureContextOptions;
  /** Largest frame accepted; one SIP message per frame (RFC 7118 sec. 5.1). */
  readonly maxMessageBytes?: number;
  readonly idleTimeoutMs?: number;
  readonly maxQueuedBytes?: number;
  /** Open WebSockets; beyond it new ones are closed with 1013 (try again later). */
  readonly maxConnections?: number;
  /** Admission of each request (receive-gate.ts). */
  readonly gate?: ReceiveGate;
  /** Time a client has to send the upgrade request's headers, and the whole request; 408 then close. */
  readonly headersTimeoutMs?: number;
  readonly requestTimeoutMs?: number;
}

const normalise = (address: string | undefined): string => (address ?? '').replace(/^::ffff:/, '');

/**
 * SIP over WebSocket (RFC 7118): the `sip` subprotocol is required (sec. 4), every frame holds
 * exactly one message (sec. 5.1, parsed like a datagram), the transport is reliable and a
 * response goes back on the connection the request arrived on (sec. 5.3). Browsers cannot
 * accept connections, so requests to a WebSocket peer only ever reuse its open connection.
 */
export class WebSocketTransport implements SipTransport {
  readonly name: 'WS' | 'WSS';
  private readonly http: HttpServer;
  private readonly wss: WebSocketServer;
  private readonly connections = new Map<string, Flow>();
  private localEndpoint: Endpoint = { address: '', port: 0 };

  private constructor(
    private readonly options: WebSocketOptions,
    private readonly listener: TransportListener,
  ) {
    this.name = options.tls ? 'WSS' : 'WS';
    const headersTimeout = options.headersTimeoutMs ?? 15_000;
    const requestTimeout = Math.max(options.requestTimeoutMs ?? 60_000, headersTimeout);
    // Node checks these timeouts on a timer (30 s by default): check at a quarter of the shorter.
    const connectionsCheckingInterval = Math.max(50, Math.min(1_000, Math.floor(headersTimeout / 4)));
    this.http = options.tls ? createHttpsServer({ ...options.tls, connectionsCheckingInterval }) : createHttpServer({ connectionsCheckingInterval });
    this.http.on('request', (_req, res) => {
      res.writeHead(426, { 'content-type': 'text/plain', upgrade: 'websocket' }).end('SIP over WebSocket: upgrade with subprotocol "sip"\n');
    });
    // The upgrade request is plain HTTP: bounded like every HTTP server of the platform.
    this.http.headersTimeout = headersTimeout;
    this.http.requestTimeout = requestTimeout;
    this.wss = new WebSocketServer({
      server: this.http,
      maxPayload: options.maxMessageBytes ?? 256 * 1024,
      handleProtocols: (protocols) => (protocols.has('sip') ? 'sip' : false),
    });
    // ws re-emits the HTTP server's errors on itself: without a listener from the start, a port
    // already in use was thrown as an uncaught 'error' event and took the process down with a
    // stack trace, besides rejecting listen().
    this.wss.on('error', () => undefined);
    this.wss.on('connection', (ws, req) => this.adopt(ws, { address: normalise(req.socket.remoteAddress), port: req.socket.remotePort ?? 0 }));
  }

  static async listen(options: WebSocketOptions, listener: TransportListener): Promise<WebSocketTransport> {
    const t = new WebSocketTransport(options, listener);
    await new Promise<void>((resolve, reject) => {
      t.http.once('error', reject);
      t.http.listen({ port: options.port, host: options.host, exclusive: true }, () => {
        t.http.off('error', reject);
        resolve();
      });
    });
    t.http.on('error', () => undefined);
    t.http.on('clientError', (_err, socket) => socket.destroy());
    const addr = t.http.address();
    if (addr && typeof addr === 'object') t.localEndpoint = { address: options.host, port: addr.port };
    return t;
  }

  get local(): Endpoint {
    return this.localEndpoint;
  }

  private adopt(ws: WebSocket, remote: Endpoint): void {
    // RFC 7118 sec. 4: a client that did not offer "sip" is not speaking SIP.
    if (ws.protocol !== 'sip') {
      ws.close(1002, 'subprotocol "sip" required');
      return;
    }
    if (this.wss.clients.size > (this.options.maxConnections ?? 10_000)) {
      ws.close(1013, 'too many connections');
      return;
    }
    const maxQueued = this.options.maxQueuedBytes ?? 1024 * 1024;
    let open = true;
    const flow: Flow = {
      transport: this.name,
      reliable: true,
      secure: this.name === 'WSS',
      local: this.localEndpoint,
      remote,
      get open() {
        return open;
      },
      send: (message, onLateFailure) => {
        if (!open) throw new Error(`WebSocket to ${remote.address}:${remote.port} is closed`);
        if (ws.bufferedAmount > maxQueued) {
          ws.terminate();
          throw new Error('peer is not reading: WebSocket dropped');
        }
        // Text frames: SIP is UTF-8 text, and browsers' SIP stacks expect text (sec. 5.1 allows both).
        ws.send(serialize(message).toString('utf8'), onLateFailure ? (e) => e && onLateFailure(e) : undefined);
      },
    };
    const k = `${remote.address}|${remote.port}`;
    this.connections.set(k, flow);
    let idle: NodeJS.Timeout | undefined;
    const touch = (): void => {
      clearTimeout(idle);
      idle = setTimeout(() => ws.terminate(), this.options.idleTimeoutMs ?? 10 * 60_000);
      idle.unref();
    };
    touch();
    ws.on('message', (data) => {
      touch();
      const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
      // RFC 5626-style CRLF keep-alives are tolerated and ignored.
      if (buf.length <= 4 && buf.every((b) => b === 13 || b === 10)) return;
      let message;
      try {
        message = parseDatagram(buf);
      } catch (error) {
        if (error instanceof SipParseError) this.listener({ kind: 'invalid', error, flow });
        return;
      }
      if (this.options.gate && !this.options.gate.message(message, flow)) return;
      this.listener({ kind: 'message', message, flow });
    });
    ws.on('error', () => ws.terminate());
    ws.on('close', () => {
      open = false;
      clearTimeout(idle);
      this.connections.delete(k);
    });
  }

  flowTo(target: Endpoint): Flow {
    const flow = this.connections.get(`${target.address}|${target.port}`);
    if (!flow?.open) throw new Error(`no open WebSocket to ${target.address}:${target.port}`);
    return flow;
  }

  async close(): Promise<void> {
    for (const ws of this.wss.clients) ws.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
  }
}
