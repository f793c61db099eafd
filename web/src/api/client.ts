import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from './management';

export type Schemas = components['schemas'];

/** The management API's error body: `{code, message, issues?}` (docs/api.md, Errors). */
export interface ApiIssue {
  readonly path: string;
  readonly message: string;
}
export interface ApiErrorBody {
  readonly code: string;
  readonly message: string;
  readonly issues?: readonly ApiIssue[];
}

/** A refused request, kept whole so a form can show each issue beside its field. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ApiErrorBody,
  ) {
    super(body.message);
  }
  /** Issues whose path starts with `prefix` (e.g. `blocks[2].settings`), with the prefix removed. */
  issuesUnder(prefix: string): ApiIssue[] {
    const out: ApiIssue[] = [];
    for (const issue of this.body.issues ?? []) {
      if (issue.path === prefix) out.push({ path: '', message: issue.message });
      else if (issue.path.startsWith(`${prefix}.`)) out.push({ path: issue.path.slice(prefix.length + 1), message: issue.message });
    }
    return out;
  }
}

const isErrorBody = (body: unknown): body is ApiErrorBody =>
  typeof body === 'object' && body !== null && typeof (body as { message?: unknown }).message === 'string';

/** Turns an openapi-fetch result into its data, or throws the API's error. */
export function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.response.ok && result.error === undefined) return result.data as T;
  const body = isErrorBody(result.error) ? result.error : { code: 'unknown', message: `${result.response.status} ${result.response.statusText}` };
  throw new ApiError(result.response.status, body);
}

/** A typed client of the management API (types generated from docs/openapi/management.json). */
export function managementClient(token: string, onUnauthenticated: () => void) {
  const client = createClient<paths>({ baseUrl: window.location.origin });
  const auth: Middleware = {
    onRequest({ request }) {
      request.headers.set('Authorization', `Bearer ${token}`);
      return request;
    },
    onResponse({ response }) {
      if (response.status === 401) onUnauthenticated();
      return response;
    },
  };
  client.use(auth);
  return client;
}
export type ManagementClient = ReturnType<typeof managementClient>;

/**
 * Fetches a binary resource (recording, Master Report) with the bearer token: an `<audio src>` or a
 * plain link cannot send the Authorization header.
 */
export async function fetchBlob(token: string, url: string): Promise<Blob> {
  const response = await fetch(url, { headers: { Authorization: `Bearer ${token}` } });
  if (!response.ok) {
    const body: unknown = await response.json().catch(() => undefined);
    throw new ApiError(response.status, isErrorBody(body) ? body : { code: 'unknown', message: `${response.status} ${response.statusText}` });
  }
  return response.blob();
}

/** A message for anything a request threw, with the API's own words when it answered. */
export function describeError(error: unknown): string {
  if (error instanceof ApiError) return error.body.message;
  if (error instanceof TypeError) return 'The platform could not be reached. Check the connection and try again.';
  return error instanceof Error ? error.message : String(error);
}

/**
 * A PUT body made by the generic SpecEditor from a stored spec and a person's edits. Its shape is
 * only known at run time, so the API judges it (a 400 names each wrong field at its path); this is
 * the one place the dashboard hands the typed client a body it did not type.
 */
export const editedBody = (spec: { readonly [key: string]: unknown }): never => spec as never;
