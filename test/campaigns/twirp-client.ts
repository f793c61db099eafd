import { request } from 'node:http';
import { loadConfig } from '../../core/config/load-config.js';
import { createLogger } from '../../core/logger.js';
import { createControlApp } from '../../control-api/api/control-app.js';
import { serve, type RunningServer } from '../../control-api/platform/http/serve.js';
import type { Store } from '../../control-api/platform/store/database.js';
import type { Clock } from '../../core/clock.js';

export interface TwirpResponse {
  readonly status: number;
  readonly contentType: string;
  readonly body: Record<string, unknown>;
}

export interface TwirpCall {
  readonly host?: string;
  readonly path?: string;
  readonly method?: string;
  readonly token?: string | null;
  readonly contentType?: string;
  readonly body?: unknown;
  readonly raw?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** Talks HTTP/1.1 to the control API on 127.0.0.1 with any Host header (fetch cannot set Host). */
export function twirpRequest(port: number, call: TwirpCall): Promise<TwirpResponse> {
  const payload = call.raw ?? (call.body !== undefined ? JSON.stringify(call.body) : '');
  const headers: Record<string, string> = {
    Host: call.host ?? 'acme.localhost',
    'Content-Type': call.contentType ?? 'application/json',
    'Content-Length': String(Buffer.byteLength(payload)),
    ...(call.token ? { Authorization: call.token } : {}),
    ...call.headers,
  };
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: call.method ?? 'POST', path: call.path ?? '/api/v1/Campaign/SendMessage', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), body: (text ? JSON.parse(text) : {}) as Record<string, unknown> });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** The real control app (management API + campaign service) on an ephemeral loopback port. */
export async function startControl(store: Store, campaigns: { enqueue?: (id: string, at: number) => Promise<void>; clock?: Clock } = {}): Promise<RunningServer> {
  const config = loadConfig({ env: {}, overrides: { control: { bodyLimitBytes: 64 * 1024 } } });
  const app = createControlApp({
    store,
    logger: createLogger({ level: 'silent' }),
    config,
    operatorToken: 'op_test_operator_token_0123456789abcdef',
    secretKey: Buffer.alloc(32, 7),
    campaigns,
  });
  return serve(app, '127.0.0.1', 0);
}
