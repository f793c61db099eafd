import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { startPlatform, type Platform } from '../../../bin/platform.js';
import { loadConfig } from '../../../core/config/load-config.js';
import { createLogger } from '../../../core/logger.js';
import { campaignDoc, numberDoc, recipeDoc } from '../resource-documents.js';

/** The real platform (control + sandbox roles) on loopback, seeded with a tenant to fuzz. */
export interface FuzzTarget {
  readonly controlPort: number;
  readonly sandboxPort: number;
  readonly tokens: {
    readonly operator: string;
    readonly management: string;
    readonly otherManagement: string;
    readonly sandbox: string;
    readonly staticSandbox: string;
    readonly campaign: string;
  };
  /** Token ids the fuzz must not revoke (its own credentials). */
  readonly ownTokenIds: ReadonlySet<string>;
  readonly clientId: string;
  readonly otherClientId: string;
  readonly recipes: string[];
  readonly numbers: string[];
  readonly campaignIds: string[];
  readonly documents: { readonly control: unknown; readonly sandbox: unknown };
  /** Log lines at level error or above (the platform logs every 5xx with its cause). */
  readonly errorLogs: string[];
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

interface Reply {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

async function call(port: number, token: string, method: string, url: string, body?: unknown): Promise<Reply> {
  const response = await fetch(`http://127.0.0.1:${port}${url}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  const reply = { status: response.status, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
  if (reply.status >= 300) throw new Error(`seeding ${method} ${url} answered ${reply.status}: ${text}`);
  return reply;
}

export interface FuzzTargetOptions {
  /** PostgreSQL URL; absent: embedded PGlite under a temporary data dir. */
  readonly databaseUrl?: string;
  readonly bodyLimitBytes?: number;
}

export async function startFuzzTarget(options: FuzzTargetOptions = {}): Promise<FuzzTarget> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'vap-fuzz-'));
  const [controlPort, sandboxPort] = [await freePort(), await freePort()];
  const operator = 'op_fuzz_operator_token_0123456789abcdef';
  const staticSandbox = 'static-sandbox-token-0123456789';
  const config = loadConfig({
    env: {},
    overrides: {
      roles: ['control', 'sandbox'],
      logLevel: 'warn',
      dataDir,
      ...(options.databaseUrl ? { database: { url: options.databaseUrl } } : {}),
      control: { host: '127.0.0.1', port: controlPort, ...(options.bodyLimitBytes ? { bodyLimitBytes: options.bodyLimitBytes } : {}) },
      sandbox: { host: '127.0.0.1', port: sandboxPort, tokens: [staticSandbox] },
      security: { operatorToken: operator, secretKey: '07'.repeat(32) },
      // A kept-alive connection the server closes just as the client reuses it is an HTTP/1.1
      // race, not a server fault; on a loaded machine it happened a few times per 30k requests.
      http: { keepAliveTimeoutMs: 60_000 },
      shutdownGraceMs: 1_000,
    },
  });
  const errorLogs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line && (JSON.parse(line) as { level?: string }).level === 'error') errorLogs.push(line);
      }
      done();
    },
  });
  // POST /v1/admin/drain is fuzzed like every operation, but its shutdown would stop the target
  // mid-run: here it only marks the platform draining (/readyz 503).
  const platform: Platform = await startPlatform(config, createLogger({ level: 'warn' }, sink), { onShutdownRequested: () => undefined });

  const clientId = 'fuzz';
  const otherClientId = 'fuzz-other';
  await call(controlPort, operator, 'POST', '/v1/tenants', { clientId, name: 'Fuzz', timezone: 'Asia/Kolkata' });
  await call(controlPort, operator, 'POST', '/v1/tenants', { clientId: otherClientId, name: 'Fuzz other' });
  const issue = async (tenant: string, scopes: string[]): Promise<{ id: string; token: string }> => {
    const { body } = await call(controlPort, operator, 'POST', `/v1/tenants/${tenant}/tokens`, { name: `fuzz ${scopes.join(' ')}`, scopes });
    return { id: String(body['id']), token: String(body['token']) };
  };
  const management = await issue(clientId, ['management']);
  const other = await issue(otherClientId, ['management']);
  const sandbox = await issue(clientId, ['sandbox']);
  const campaign = await issue(clientId, ['campaign']);
  const base = `/v1/tenants/${clientId}`;
  await call(controlPort, operator, 'POST', `${base}/recipes`, recipeDoc('seed recipe'));
  await call(controlPort, operator, 'POST', `${base}/phone-numbers`, numberDoc('+914440009000', 'seed recipe'));
  const created = await call(controlPort, operator, 'POST', `${base}/campaigns`, campaignDoc('seed campaign', '+914440009000', 'seed recipe', { published: true }));
  const control = await (await fetch(`http://127.0.0.1:${controlPort}/v1/openapi.json`)).json();
  const sandboxDoc = await (await fetch(`http://127.0.0.1:${sandboxPort}/openapi.json`)).json();

  return {
    controlPort,
    sandboxPort,
    tokens: { operator, management: management.token, otherManagement: other.token, sandbox: sandbox.token, staticSandbox, campaign: campaign.token },
    ownTokenIds: new Set([management.id, other.id, sandbox.id, campaign.id]),
    clientId,
    otherClientId,
    recipes: ['seed recipe'],
    numbers: ['+914440009000'],
    campaignIds: [String(created.body['id'])],
    documents: { control, sandbox: sandboxDoc },
    errorLogs,
    async stop() {
      await platform.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
