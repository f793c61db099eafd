/**
 * The CLI against a running platform's management API (`--server URL --token T`, or VAP_SERVER /
 * VAP_TOKEN) instead of the local database: what makes `apply` and `token` usable while the
 * platform runs on embedded PGlite (one process per data directory), or from another machine.
 */

/** sysexits.h codes the remote commands answer with. */
export const exitCodes = { usage: 64, dataError: 65, unavailable: 69, software: 70, noPermission: 77 } as const;

export interface RemoteTarget {
  /** Base URL of the control API, without a trailing slash: `http://127.0.0.1:8080`. */
  readonly server: string;
  readonly token: string;
}

export interface RemoteIssue {
  readonly path: string;
  readonly message: string;
}

/** A refusal or failure of the remote call, with the exit code it maps to and the server's field issues. */
export class RemoteError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
    readonly issues: readonly RemoteIssue[] = [],
    /** The HTTP status of the refusal; undefined when no answer came. */
    readonly status?: number,
  ) {
    super(message);
    this.name = 'RemoteError';
  }
}

/** A usage mistake about the remote options (exit 64 with the command's usage). */
export class RemoteUsageError extends Error {}

/**
 * The target from `--server` / `--token`, else VAP_SERVER / VAP_TOKEN; undefined when neither
 * names a server (the command then works on the configured database). The token is better given
 * through VAP_TOKEN: a command line is visible to every user of the machine.
 */
export function remoteTarget(values: { server?: string | undefined; token?: string | undefined }, env: Readonly<Record<string, string | undefined>>): RemoteTarget | undefined {
  const server = values.server ?? (env['VAP_SERVER'] || undefined);
  const token = values.token ?? (env['VAP_TOKEN'] || undefined);
  if (server === undefined) {
    if (values.token !== undefined) throw new RemoteUsageError('--token needs --server <url> (or VAP_SERVER): without a server the command uses the local database');
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new RemoteUsageError(`--server: "${server}" is not a URL (expected e.g. http://127.0.0.1:8080)`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search || url.hash || url.username) {
    throw new RemoteUsageError(`--server: expected an http(s) URL of the control API such as http://127.0.0.1:8080, got "${server}"`);
  }
  if (!token) throw new RemoteUsageError('--server needs --token <token> or VAP_TOKEN: the operator token, or a tenant token with the management scope');
  return { server: url.href.replace(/\/+$/, ''), token };
}

export interface RemoteResponse {
  readonly status: number;
  readonly body: unknown;
}

function networkProblem(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const code = cause?.code;
  if (code === 'ECONNREFUSED') return 'connection refused (is the platform running, and is this its control port?)';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host name not found';
  if (code === 'ETIMEDOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') return 'connection timed out';
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') return 'the connection was closed before an answer';
  return cause?.message ?? (error as Error).message;
}

/** What an error answer says: `{code, message, issues?}` from the management API, or its status. */
function refusal(target: RemoteTarget, method: string, path: string, status: number, body: unknown): RemoteError {
  const error = (typeof body === 'object' && body !== null ? body : {}) as { code?: unknown; message?: unknown; issues?: unknown };
  const message = typeof error.message === 'string' ? error.message : `HTTP ${status}`;
  const issues = Array.isArray(error.issues) ? (error.issues as RemoteIssue[]).filter((i) => typeof i?.path === 'string' && typeof i?.message === 'string') : [];
  const code = typeof error.code === 'string' ? `${error.code}: ` : '';
  if (status === 401) return new RemoteError(`token refused by ${target.server} (401): give the operator token or a tenant token with the management scope (--token or VAP_TOKEN)`, exitCodes.noPermission, [], status);
  if (status === 403) return new RemoteError(`permission denied by ${target.server} (403 ${code}${message})`, exitCodes.noPermission, [], status);
  if (status >= 500) return new RemoteError(`${target.server} failed (${status} ${code}${message}); retry later or read the platform's log`, exitCodes.software, [], status);
  return new RemoteError(`${method} ${path}: ${status} ${code}${message}`, exitCodes.dataError, issues, status);
}

/** One JSON (or YAML) request to the management API; a non-2xx answer is thrown as RemoteError. */
export async function callApi(target: RemoteTarget, method: string, path: string, options: { body?: unknown; query?: Readonly<Record<string, string>> } = {}): Promise<RemoteResponse> {
  const query = options.query && Object.keys(options.query).length > 0 ? `?${new URLSearchParams(options.query).toString()}` : '';
  const url = `${target.server}${path}${query}`;
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers: { Authorization: `Bearer ${target.token}`, Accept: 'application/json', ...(options.body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
      signal: AbortSignal.timeout(120_000),
    });
  } catch (error) {
    throw new RemoteError(`cannot reach the platform at ${target.server}: ${networkProblem(error)}`, exitCodes.unavailable);
  }
  const text = await response.text();
  let body: unknown = undefined;
  if (text) {
    try {
      body = JSON.parse(text) as unknown;
    } catch {
      body = text;
    }
  }
  if (!response.ok) throw refusal(target, method, path, response.status, body);
  return { status: response.status, body };
}

/** The remote options as they appear in every command's usage. */
export const remoteUsage = `against a running platform (instead of the local database):
  --server <url>   the control API, e.g. http://127.0.0.1:8080 (or VAP_SERVER)
  --token <token>  the operator token or a tenant token with the management scope (or VAP_TOKEN,
                   which keeps it off the command line)
exit codes: 64 usage, 65 refused as invalid, 69 platform unreachable, 70 platform failure,
77 token refused or not allowed`;
