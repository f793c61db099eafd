import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import { httpSchema, type HttpSettings } from '../../../core/config/schema.js';
import { listening } from '../../../core/errors.js';

export interface RunningServer {
  readonly server: Server;
  readonly port: number;
  readonly url: string;
  /** Stops accepting, lets in-flight requests finish within `graceMs`, then cuts the rest. */
  close(graceMs?: number): Promise<void>;
}

export interface ServeOptions {
  /** Names the server in a listen failure, e.g. `control API`. */
  readonly name?: string;
  /** Timeouts (config `http.*`); the defaults when absent. */
  readonly http?: HttpSettings;
}

export const defaultHttpSettings: HttpSettings = httpSchema.parse({});

/**
 * Node checks header and request timeouts on a timer (every 30 s by default), so a slow client
 * could hold a connection up to 30 s past its timeout: check at a quarter of the shorter timeout,
 * at most every second, at least every 50 ms.
 */
export function checkingIntervalMs(http: HttpSettings): number {
  return Math.max(50, Math.min(1_000, Math.floor(Math.min(http.headersTimeoutMs, http.requestTimeoutMs) / 4)));
}

/** Applies the `http.*` timeouts to a Node HTTP server (also used by the SIP WebSocket transport). */
export function applyHttpTimeouts(server: Server, http: HttpSettings): void {
  // Slow-loris protection: bounded time for the headers and for the whole request (Node answers
  // 408 and closes), for an idle kept-alive connection, and for a connection where nothing moves.
  server.headersTimeout = http.headersTimeoutMs;
  server.requestTimeout = http.requestTimeoutMs;
  server.keepAliveTimeout = http.keepAliveTimeoutMs;
  server.setTimeout(http.idleTimeoutMs);
}

export async function serve(app: Koa, host: string, port: number, options: ServeOptions = {}): Promise<RunningServer> {
  const http = options.http ?? defaultHttpSettings;
  const server = createServer({ connectionsCheckingInterval: checkingIntervalMs(http) }, app.callback());
  applyHttpTimeouts(server, http);
  await listening(options.name ?? 'HTTP server', host, port, () => {
    return new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  });
  const bound = (server.address() as AddressInfo).port;
  const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return {
    server,
    port: bound,
    url: `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${bound}`,
    close(graceMs = 10_000) {
      return new Promise<void>((resolve) => {
        const force = setTimeout(() => server.closeAllConnections(), graceMs);
        force.unref();
        server.close(() => {
          clearTimeout(force);
          resolve();
        });
        server.closeIdleConnections();
      });
    },
  };
}
