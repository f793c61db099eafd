import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../core/config/load-config.js';
import { silentLogger } from '../../core/logger.js';
import { DirectoryRecordingStore } from '../../control-api/features/calls/recording-store.js';
import { createControlApp } from '../../control-api/api/control-app.js';
import { serve, type RunningServer } from '../../control-api/platform/http/serve.js';
import type { Store } from '../../control-api/platform/store/database.js';
import { operatorToken, secretKey } from '../helpers/management-app.js';
import { OpenApiResponseValidator, type OpenApiDocument } from '../helpers/openapi-response-validator.js';

/**
 * The real control app on 127.0.0.1 with recordings read from a temporary directory. Every
 * response is validated against the served `/v1/openapi.json` (status, content type, body schema).
 */
export interface CallsApp {
  readonly server: RunningServer;
  readonly recordingsDir: string;
  get(path: string, token?: string | null, headers?: Record<string, string>): Promise<{ status: number; headers: Headers; body: Record<string, unknown>; bytes: Buffer }>;
  close(): Promise<void>;
}

export async function startCallsApp(store: Store): Promise<CallsApp> {
  const recordingsDir = mkdtempSync(path.join(tmpdir(), 'vap-recordings-'));
  const app = createControlApp({
    store,
    logger: silentLogger,
    config: loadConfig({ env: {}, overrides: {} }),
    operatorToken,
    secretKey,
    recordings: new DirectoryRecordingStore(recordingsDir),
  });
  const server = await serve(app, '127.0.0.1', 0);
  const validator = new OpenApiResponseValidator((await (await fetch(`${server.url}/v1/openapi.json`)).json()) as OpenApiDocument);
  return {
    server,
    recordingsDir,
    async get(p, token = operatorToken, headers = {}) {
      const response = await fetch(`${server.url}${p}`, { headers: { ...(token ? { Authorization: `Bearer ${token}` } : {}), ...headers } });
      const bytes = Buffer.from(await response.arrayBuffer());
      validator.assertResponse({ method: 'GET', path: p.split('?')[0]!, status: response.status, headers: response.headers, bodyText: bytes.toString('utf8') });
      const json = (response.headers.get('content-type') ?? '').includes('application/json');
      return { status: response.status, headers: response.headers, body: json ? (JSON.parse(bytes.toString('utf8')) as Record<string, unknown>) : {}, bytes };
    },
    async close() {
      await server.close(0);
      rmSync(recordingsDir, { recursive: true, force: true });
    },
  };
}
