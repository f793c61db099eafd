import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../../core/config/load-config.js';
import { clientIdPattern } from '../../control-api/model/domain/tenant.js';
import type { Store } from '../../control-api/platform/store/database.js';
import { tokenScopes, type TokenScope } from '../../control-api/model/domain/api-token.js';
import { issueToken, revokeToken } from '../../control-api/model/tenants/api-tokens.js';
import { openCliStore, StoreBusyError, storeBusyExitCode } from './cli-store.js';
import type { CliCommand } from './command.js';
import { callApi, RemoteError, remoteTarget, remoteUsage, RemoteUsageError, type RemoteTarget } from './remote-api.js';

const usage = `usage:
  npm run cli -- token create --tenant <client-id> --scope <scope>[,<scope>] [--name <label>]
                              [--expires-in-days <n>] [--no-create-tenant] [<where>]
  npm run cli -- token list   --tenant <client-id> [<where>]
  npm run cli -- token revoke --tenant <client-id> --id <token-id> [<where>]
where: --config <file> (the local database) | --server <url> --token <token> (a running platform)

scopes: ${tokenScopes.join(', ')}
create prints the token once on stdout (only its SHA-256 digest is stored); the tenant is created
when it does not exist unless --no-create-tenant is given (through --server that takes the
operator token). Without --server it uses the configured database; with the embedded database (no
DATABASE_URL) stop the platform first (PGlite allows one process per data directory), or go
through the running platform with --server.

${remoteUsage}
`;

class UsageError extends Error {}

function parseScopes(value: string | undefined): TokenScope[] {
  if (!value) throw new UsageError('--scope is required');
  const scopes = value.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = scopes.filter((s) => !(tokenScopes as readonly string[]).includes(s));
  if (scopes.length === 0 || unknown.length > 0) throw new UsageError(`--scope: expected one or more of ${tokenScopes.join(', ')}; got "${value}"`);
  return [...new Set(scopes)] as TokenScope[];
}

function parseExpiry(value: string | undefined, now: Date): Date | null {
  if (value === undefined) return null;
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 3650) throw new UsageError('--expires-in-days: expected a whole number from 1 to 3650');
  return new Date(now.getTime() + Number(value) * 86_400_000);
}

async function findTenant(store: Store, clientId: string): Promise<string | undefined> {
  return (await store.db.selectFrom('tenants').select('id').where('client_id', '=', clientId).executeTakeFirst())?.id;
}

export interface TokenCommandIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly env?: Readonly<Record<string, string | undefined>>;
}

const processIo: TokenCommandIo = { stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t) };

export async function runTokenCommand(args: readonly string[], io: TokenCommandIo = processIo): Promise<number> {
  let store: Store | undefined;
  try {
    const { values, positionals } = parseArgs({
      args: [...args],
      allowPositionals: true,
      strict: true,
      options: {
        tenant: { type: 'string' },
        scope: { type: 'string' },
        name: { type: 'string' },
        id: { type: 'string' },
        'expires-in-days': { type: 'string' },
        'no-create-tenant': { type: 'boolean' },
        config: { type: 'string', short: 'c' },
        server: { type: 'string' },
        token: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
    const action = positionals[0];
    if (values.help || !action) {
      (values.help ? io.stdout : io.stderr)(usage);
      return values.help ? 0 : 64;
    }
    if (!['create', 'list', 'revoke'].includes(action) || positionals.length > 1) throw new UsageError(`unknown token action "${positionals.join(' ')}"`);
    const clientId = values.tenant;
    if (!clientId || !clientIdPattern.test(clientId)) throw new UsageError('--tenant: expected a client ID (a DNS label: lower-case letters, digits, inner hyphens)');
    const scopes = action === 'create' ? parseScopes(values.scope) : [];
    const now = new Date();
    const expiresAt = parseExpiry(values['expires-in-days'], now);
    if (action === 'revoke' && !/^[0-9a-f-]{36}$/i.test(values.id ?? '')) throw new UsageError('--id: expected the token id (a UUID) shown by create or list');
    const target = remoteTarget(values, io.env ?? process.env);
    if (target && values.config) throw new UsageError('--config and --server exclude each other: --server works through the running platform');
    if (target) {
      const request = { clientId, scopes, name: values.name ?? `cli ${now.toISOString()}`, expiresAt, id: values.id ?? '', createTenant: !values['no-create-tenant'] };
      return await tokenRemotely(target, action as 'create' | 'list' | 'revoke', request, io);
    }

    const config = loadConfig({ ...(io.env ? { env: io.env } : {}), ...(values.config ? { file: values.config } : {}) });
    store = await openCliStore(config);
    let tenantId = await findTenant(store, clientId);

    if (action === 'create') {
      if (!tenantId) {
        if (values['no-create-tenant']) throw new UsageError(`tenant "${clientId}" does not exist`);
        tenantId = (await store.db.insertInto('tenants').values({ client_id: clientId, name: clientId }).returning('id').executeTakeFirstOrThrow()).id;
        io.stderr(`created tenant ${clientId}\n`);
      }
      const name = values.name ?? `cli ${now.toISOString()}`;
      const issued = await issueToken(store.db, { tenantId, name, scopes, expiresAt });
      io.stderr(`token ${issued.id} (${issued.prefix}...) for tenant ${clientId}, scopes ${scopes.join(',')}, ${expiresAt ? `expires ${expiresAt.toISOString()}` : 'no expiry'}; shown once:\n`);
      io.stdout(`${issued.token}\n`);
      return 0;
    }
    if (!tenantId) throw new UsageError(`tenant "${clientId}" does not exist`);
    if (action === 'list') {
      const rows = await store.db
        .selectFrom('api_tokens')
        .select(['id', 'name', 'token_prefix', 'scopes', 'expires_at', 'revoked_at'])
        .where('tenant_id', '=', tenantId)
        .orderBy('created_at')
        .execute();
      for (const r of rows) {
        const state = r.revoked_at ? 'revoked' : r.expires_at && r.expires_at <= now ? 'expired' : 'active';
        io.stdout(`${r.id}  ${r.token_prefix}...  ${state.padEnd(7)}  ${r.scopes.join(',')}  ${r.name}\n`);
      }
      return 0;
    }
    if (!(await revokeToken(store.db, tenantId, values.id!, now))) throw new UsageError(`no active token ${values.id} for tenant ${clientId}`);
    io.stderr(`revoked token ${values.id}\n`);
    return 0;
  } catch (error) {
    if (error instanceof StoreBusyError) {
      io.stderr(`token: ${error.message}\n`);
      return storeBusyExitCode;
    }
    if (error instanceof RemoteError) {
      io.stderr(`token: ${error.message}\n${error.issues.map((i) => `  ${i.path}: ${i.message}\n`).join('')}`);
      return error.exitCode;
    }
    if (error instanceof UsageError || error instanceof RemoteUsageError || error instanceof ConfigError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      io.stderr(`token: ${(error as Error).message}\n`);
      return error instanceof ConfigError ? 78 : 64;
    }
    throw error;
  } finally {
    await store?.close();
  }
}

interface RemoteTokenRequest {
  readonly clientId: string;
  readonly scopes: readonly TokenScope[];
  readonly name: string;
  readonly expiresAt: Date | null;
  readonly id: string;
  readonly createTenant: boolean;
}

interface TokenView {
  readonly id: string;
  readonly name: string;
  readonly prefix: string;
  readonly scopes: readonly string[];
  readonly expiresAt: string | null;
  readonly revokedAt: string | null;
}

/** The same three actions through the management API (`/v1/tenants/{clientId}/tokens`), printed as locally. */
async function tokenRemotely(target: RemoteTarget, action: 'create' | 'list' | 'revoke', request: RemoteTokenRequest, io: TokenCommandIo): Promise<number> {
  const tenantPath = `/v1/tenants/${encodeURIComponent(request.clientId)}`;
  const missingTenant = (error: unknown): boolean => error instanceof RemoteError && error.status === 404;
  if (action === 'create') {
    try {
      await callApi(target, 'GET', tenantPath);
    } catch (error) {
      if (!missingTenant(error)) throw error;
      // Missing, or not reachable with this token (the API does not tell them apart).
      if (!request.createTenant) throw new UsageError(`tenant "${request.clientId}" does not exist (or this token cannot reach it)`);
      await callApi(target, 'POST', '/v1/tenants', { body: { clientId: request.clientId, name: request.clientId } });
      io.stderr(`created tenant ${request.clientId}\n`);
    }
    const { body } = await callApi(target, 'POST', `${tenantPath}/tokens`, {
      body: { name: request.name, scopes: request.scopes, ...(request.expiresAt ? { expiresAt: request.expiresAt.toISOString() } : {}) },
    });
    const issued = body as TokenView & { token: string };
    io.stderr(`token ${issued.id} (${issued.prefix}...) for tenant ${request.clientId}, scopes ${issued.scopes.join(',')}, ${issued.expiresAt ? `expires ${issued.expiresAt}` : 'no expiry'}; shown once:\n`);
    io.stdout(`${issued.token}\n`);
    return 0;
  }
  if (action === 'list') {
    const now = Date.now();
    let cursor: string | undefined;
    do {
      const { body } = await callApi(target, 'GET', `${tenantPath}/tokens`, { query: { limit: '200', ...(cursor ? { cursor } : {}) } });
      const page = body as { items: TokenView[]; nextCursor?: string };
      for (const t of page.items) {
        const state = t.revokedAt ? 'revoked' : t.expiresAt && Date.parse(t.expiresAt) <= now ? 'expired' : 'active';
        io.stdout(`${t.id}  ${t.prefix}...  ${state.padEnd(7)}  ${t.scopes.join(',')}  ${t.name}\n`);
      }
      cursor = page.nextCursor;
    } while (cursor);
    return 0;
  }
  try {
    await callApi(target, 'DELETE', `${tenantPath}/tokens/${request.id}`);
  } catch (error) {
    if (error instanceof RemoteError && error.status === 404) throw new UsageError(`no active token ${request.id} for tenant ${request.clientId}`);
    throw error;
  }
  io.stderr(`revoked token ${request.id}\n`);
  return 0;
}

export const tokenCommand: CliCommand = {
  summary: 'create, list or revoke API tokens (e.g. a sandbox token for local use)',
  run: (args) => runTokenCommand(args),
};
