import type Koa from 'koa';
import { loadConfig } from '../../core/config/load-config.js';
import type { ConfigInput } from '../../core/config/schema.js';
import { createLogger, type Logger } from '../../core/logger.js';
import { createControlApp, platformKinds, type ControlAppDeps } from '../../control-api/api/control-app.js';
import { serve, type RunningServer } from '../../control-api/platform/http/serve.js';
import type { ResourceDefinition } from '../../control-api/model/resources/resource-definition.js';
import type { Store } from '../../control-api/platform/store/database.js';
import type { TenantAdmin } from '../../control-api/model/tenants/tenant-admin.js';
import { OpenApiResponseValidator, type OpenApiDocument } from './openapi-response-validator.js';

export const operatorToken = 'op_test_operator_token_0123456789abcdef';
export const secretKey = Buffer.alloc(32, 7);

export interface ManagementHarness {
  readonly server: RunningServer;
  readonly app: Koa;
  readonly validator: OpenApiResponseValidator;
  readonly document: OpenApiDocument;
  /** A client that validates every response against the served OpenAPI document. */
  client(token?: string): ManagementClient;
  close(): Promise<void>;
}

export interface ClientResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  // Tests read fields freely; the OpenAPI validation has already checked the shape.
  readonly body: Record<string, unknown> & { items?: Array<Record<string, unknown>> };
}

export interface RequestOptions {
  readonly body?: unknown;
  /** Raw body text (sent as is, with `contentType`). */
  readonly raw?: string;
  readonly contentType?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Skip OpenAPI validation (for deliberately undocumented requests such as unknown routes). */
  readonly unchecked?: boolean;
}

export interface ManagementClient {
  request(method: string, path: string, options?: RequestOptions): Promise<ClientResponse>;
  get(path: string): Promise<ClientResponse>;
  post(path: string, body: unknown): Promise<ClientResponse>;
  put(path: string, body: unknown): Promise<ClientResponse>;
  delete(path: string): Promise<ClientResponse>;
}

/** Starts the real control app on 127.0.0.1 with the given kinds and tenant persistence. */
export async function startManagementApp(
  store: Store,
  management: { definitions?: readonly ResourceDefinition[]; tenants?: TenantAdmin } = {},
  overrides: { bodyLimitBytes?: number; logger?: Logger; config?: ConfigInput; campaigns?: ControlAppDeps['campaigns'] } = {},
): Promise<ManagementHarness> {
  const config = loadConfig({ env: {}, overrides: { ...overrides.config, control: { bodyLimitBytes: overrides.bodyLimitBytes ?? 1024 * 1024 } } });
  const platform = platformKinds(secretKey);
  const app = createControlApp({
    store,
    logger: overrides.logger ?? createLogger({ level: 'silent' }),
    config,
    operatorToken,
    secretKey,
    management: { definitions: management.definitions ?? platform.definitions, tenants: management.tenants ?? platform.tenants },
    ...(overrides.campaigns ? { campaigns: overrides.campaigns } : {}),
  });
  const server = await serve(app, '127.0.0.1', 0);
  const document = (await (await fetch(`${server.url}/v1/openapi.json`)).json()) as OpenApiDocument;
  const validator = new OpenApiResponseValidator(document);
  const client = (token: string | undefined = operatorToken): ManagementClient => {
    const request = async (method: string, path: string, options: RequestOptions = {}): Promise<ClientResponse> => {
      const headers: Record<string, string> = { ...(token ? { Authorization: `Bearer ${token}` } : {}), ...options.headers };
      let body: string | undefined;
      if (options.raw !== undefined) body = options.raw;
      else if (options.body !== undefined) body = JSON.stringify(options.body);
      if (body !== undefined) headers['Content-Type'] ??= options.contentType ?? 'application/json';
      const response = await fetch(`${server.url}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
      if (options.unchecked) {
        const text = await response.text();
        return { status: response.status, headers: response.headers, text, body: (text ? JSON.parse(text) : {}) as ClientResponse['body'] };
      }
      const checked = await validator.check(method, path, response);
      return { status: checked.status, headers: checked.headers, text: checked.text, body: (checked.body ?? {}) as ClientResponse['body'] };
    };
    return {
      request,
      get: (path) => request('GET', path),
      post: (path, body) => request('POST', path, { body }),
      put: (path, body) => request('PUT', path, { body }),
      delete: (path) => request('DELETE', path),
    };
  };
  return { server, app, validator, document, client, close: () => server.close(0) };
}
