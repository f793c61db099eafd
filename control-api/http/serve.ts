import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';

export interface RunningServer {
  readonly server: Server;
  readonly port: number;
  readonly url: string;
  /** Stops accepting, lets in-flight requests finish within `graceMs`, then cuts the rest. */
  close(graceMs?: number): Promise<void>;
}

export async function serve(app: Koa, host: string, port: number): Promise<RunningServer> {
  const server = createServer(app.callback());
  // Slow-loris protection: a client gets bounded time to send its headers and body.
  server.headersTimeout = 15_000;
  server.requestTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
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
