/**
 * What every provider REST client shares: form or JSON requests with HTTP basic auth, a deadline,
 * and one error type that keeps the provider's status and code and says whether a retry may help.
 * Credentials travel only in the Authorization header and never reach a message or a log.
 */

export class ProviderApiError extends Error {
  constructor(
    message: string,
    /** HTTP status of the provider's answer; 0 when no answer came (network error, timeout). */
    readonly status: number,
    readonly retryable: boolean,
    /** The provider's own error code, when its body carried one. */
    readonly providerCode?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ProviderApiError';
  }
}

export interface ProviderRequest {
  readonly method: 'GET' | 'POST' | 'DELETE';
  readonly url: string;
  readonly basicAuth: { readonly user: string; readonly password: string };
  /** A form body (repeated names allowed) or a JSON body. */
  readonly form?: readonly (readonly [string, string])[];
  readonly json?: unknown;
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
  /** Names the provider in messages (`provider A`). */
  readonly what: string;
  /** Secrets that are part of the URL (an account id that is sealed as a secret): left out of messages. */
  readonly redact?: readonly string[];
}

/** Sends the request; answers 2xx with the parsed JSON body (or `{}`), anything else throws ProviderApiError. */
export async function providerRequest(r: ProviderRequest): Promise<Record<string, unknown>> {
  const headers: Record<string, string> = {
    authorization: `Basic ${Buffer.from(`${r.basicAuth.user}:${r.basicAuth.password}`).toString('base64')}`,
    accept: 'application/json',
  };
  let body: string | undefined;
  if (r.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(r.form.map(([k, v]): [string, string] => [k, v])).toString();
  } else if (r.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(r.json);
  }
  const deadline = AbortSignal.timeout(r.timeoutMs ?? 10_000);
  const signal = r.signal ? AbortSignal.any([r.signal, deadline]) : deadline;
  let where = new URL(r.url).pathname;
  for (const secret of r.redact ?? []) if (secret) where = where.split(encodeURIComponent(secret)).join('***');
  let response: Response;
  try {
    response = await fetch(r.url, { method: r.method, headers, ...(body !== undefined ? { body } : {}), signal, redirect: 'error' });
  } catch (error) {
    const timedOut = deadline.aborted && !r.signal?.aborted;
    throw new ProviderApiError(`${r.what} ${r.method} ${where}: ${timedOut ? 'no answer in time' : 'request failed'} (${(error as Error).message})`, 0, true, undefined, { cause: error });
  }
  const text = await response.text().catch(() => '');
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : {};
  } catch {
    parsed = undefined;
  }
  if (response.ok) {
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new ProviderApiError(`${r.what} ${r.method} ${where}: answer ${response.status} is not a JSON object`, response.status, false);
    return parsed as Record<string, unknown>;
  }
  const detail = errorDetail(parsed);
  // 408/429/5xx are the provider's momentary trouble; other 4xx are about the request or the credentials.
  const retryable = response.status === 408 || response.status === 429 || response.status >= 500;
  throw new ProviderApiError(`${r.what} ${r.method} ${where}: HTTP ${response.status}${detail.message ? ` ${detail.message}` : ''}`, response.status, retryable, detail.code);
}

/** The `code` and `message` (or `RestException`-style) fields providers put in error bodies. */
function errorDetail(body: unknown): { code?: string; message?: string } {
  if (typeof body !== 'object' || body === null) return {};
  const b = body as Record<string, unknown>;
  const inner = (typeof b.RestException === 'object' && b.RestException !== null ? b.RestException : b) as Record<string, unknown>;
  const code = inner.code ?? inner.Code ?? inner.error_code;
  const message = inner.message ?? inner.Message ?? inner.error ?? inner.detail;
  return {
    ...(code !== undefined ? { code: String(code).slice(0, 40) } : {}),
    ...(typeof message === 'string' ? { message: message.slice(0, 300) } : {}),
  };
}
