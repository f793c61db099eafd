import { request as httpRequest } from 'node:http';
import { createLogger } from '../../core/logger.js';
import { serve, type RunningServer } from '../../control-api/platform/http/serve.js';
import { plantStoreOpenApi } from '../../control-api/api/sandbox/openapi-document.js';
import { createSandboxApp } from '../../control-api/api/sandbox/sandbox-app.js';
import type { Store } from '../../control-api/platform/store/database.js';
import { OpenApiResponseValidator, type CheckedResponse } from '../helpers/openapi-response-validator.js';

export const plantValidator = new OpenApiResponseValidator(plantStoreOpenApi);

export interface PlantCallOptions {
  readonly token?: string;
  /** A value is sent as JSON; a string or Buffer is sent as it is. */
  readonly json?: unknown;
  readonly raw?: string | Buffer;
  readonly headers?: Readonly<Record<string, string>>;
}

/** A sandbox app on a real loopback port, with every response checked against the OpenAPI document. */
export class PlantClient {
  private constructor(
    readonly baseUrl: string,
    readonly server?: RunningServer,
  ) {}

  static async start(store: Store, staticTokens: readonly string[]): Promise<PlantClient> {
    const app = createSandboxApp({ store, logger: createLogger({ level: 'silent' }), staticTokens });
    const server = await serve(app, '127.0.0.1', 0);
    return new PlantClient(server.url, server);
  }

  static at(baseUrl: string): PlantClient {
    return new PlantClient(baseUrl);
  }

  async call(method: string, path: string, options: PlantCallOptions = {}): Promise<CheckedResponse> {
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    if (options.token !== undefined) headers['Authorization'] = `Bearer ${options.token}`;
    let body: string | Buffer | undefined = options.raw;
    if (options.json !== undefined) {
      body = typeof options.json === 'string' ? options.json : JSON.stringify(options.json);
      headers['Content-Type'] ??= 'application/json';
    }
    const response = await fetch(`${this.baseUrl}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
    return plantValidator.check(method, path, response);
  }

  /** For routes outside the document (unknown path, wrong method): the body must still be an Error. */
  async callUndocumented(method: string, path: string, token?: string): Promise<{ status: number; headers: Headers; body: unknown }> {
    const response = await fetch(`${this.baseUrl}${path}`, { method, ...(token ? { headers: { Authorization: `Bearer ${token}` } } : {}) });
    const text = await response.text();
    if (!(response.headers.get('content-type') ?? '').startsWith('application/json')) throw new Error(`not JSON: ${response.headers.get('content-type')}`);
    const body: unknown = JSON.parse(text);
    plantValidator.assertSchema('#/components/schemas/Error', body, `${method} ${path} -> ${response.status}`);
    return { status: response.status, headers: response.headers, body };
  }

  /** Streams a body without Content-Length (chunked), as fetch cannot be made to. */
  chunkedPost(path: string, token: string, chunks: readonly Buffer[]): Promise<{ status: number; headers: Headers; text: string }> {
    const url = new URL(path, this.baseUrl);
    return new Promise((resolve, reject) => {
      const req = httpRequest(url, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => {
          const headers = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') headers.set(k, v);
          resolve({ status: res.statusCode ?? 0, headers, text });
        });
      });
      // The server may answer 413 and close before the whole body is written.
      req.on('error', (error: NodeJS.ErrnoException) => (error.code === 'EPIPE' || error.code === 'ECONNRESET' ? undefined : reject(error)));
      for (const chunk of chunks) req.write(chunk);
      req.end();
    });
  }

  async close(): Promise<void> {
    await this.server?.close(1000);
  }
}
