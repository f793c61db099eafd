import type Koa from 'koa';
import { ZodError } from 'zod';
import { AppError, type FieldIssue } from '../../../core/errors.js';
import type { Logger } from '../../../core/logger.js';
import { formatPath, toFieldIssues } from '../validation.js';

/** The JSON error body of every management-style API: `{code, message, issues?}`. */
export interface ErrorBody {
  readonly code: string;
  readonly message: string;
  readonly issues?: readonly FieldIssue[];
}

export { formatPath };

/** Every zod issue with its own path, so a client can mark each offending field at once. */
export function zodIssues(error: ZodError, prefix = ''): FieldIssue[] {
  return toFieldIssues(error, prefix);
}

/**
 * `invalid_argument` listing every issue; the message leads with the first one, naming its field
 * once ("invalid tenant: timezone must be ..."), or `what` when it concerns the whole body.
 */
export function fromZodError(error: ZodError, what = 'request body', prefix = ''): AppError {
  const issues = zodIssues(error, prefix);
  const first = issues[0];
  let summary = 'invalid';
  if (first) summary = !first.path || first.message.startsWith(first.path) ? first.message : `${first.path}: ${first.message}`;
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
  return new AppError('invalid_argument', `invalid ${what}: ${summary}${more}`, { issues });
}

/**
 * An `AppError` whose HTTP status is more precise than its code's Twirp default: REST clients
 * expect 413 for an oversized body and 415 for a wrong content type.
 */
export class HttpError extends AppError {
  constructor(
    readonly status: number,
    code: AppError['code'],
    message: string,
  ) {
    super(code, message);
  }

  override get httpStatus(): number {
    return this.status;
  }
}

// PostgreSQL SQLSTATEs that mean the input was wrong, not the server: a safety net so a
// constraint a repository did not pre-check still answers a precise 4xx instead of a 500.
const sqlStates: Readonly<Record<string, { code: AppError['code']; message: string }>> = {
  '23505': { code: 'already_exists', message: 'a resource with the same unique key already exists' },
  '23503': { code: 'failed_precondition', message: 'the operation conflicts with a reference between resources' },
  '23514': { code: 'invalid_argument', message: 'a value violates a constraint' },
  '22P02': { code: 'invalid_argument', message: 'a value has an invalid format' },
  '22001': { code: 'invalid_argument', message: 'a value is too long' },
  '22003': { code: 'invalid_argument', message: 'a number is out of range' },
  '22007': { code: 'invalid_argument', message: 'a date or time has an invalid format' },
  '22008': { code: 'invalid_argument', message: 'a date or time is out of range' },
  // U+0000 in text (22021) or a \u0000 / lone-surrogate escape in jsonb (22P05). Requests are
  // checked where they enter (acceptable-json.ts); this only catches text arriving some other way.
  '22021': { code: 'invalid_argument', message: 'a text value holds a character the database cannot store (U+0000)' },
  '22P05': { code: 'invalid_argument', message: 'a text value holds a character the database cannot store (U+0000 or a lone surrogate)' },
};

interface HttpLikeError {
  status?: unknown;
  expose?: unknown;
  message?: unknown;
  type?: unknown;
  code?: unknown;
}

/** Maps anything thrown below the HTTP layer to an `AppError` (unknown failures become `internal`). */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  if (error instanceof ZodError) return fromZodError(error);
  const e = (typeof error === 'object' && error !== null ? error : {}) as HttpLikeError;
  if (typeof e.code === 'string' && sqlStates[e.code]) {
    const mapped = sqlStates[e.code]!;
    return new AppError(mapped.code, mapped.message, { cause: error });
  }
  const status = typeof e.status === 'number' ? e.status : undefined;
  if (status === 413) return new HttpError(413, 'resource_exhausted', 'request body too large');
  if (status !== undefined && status >= 400 && status < 500 && e.expose === true) {
    return new AppError(status === 404 ? 'not_found' : 'invalid_argument', String(e.message), { cause: error });
  }
  return new AppError('internal', 'internal error', { cause: error });
}

export function sendError(ctx: Koa.Context, error: AppError): void {
  const status = error.httpStatus;
  const body: ErrorBody = { code: error.code, message: error.message, ...(error.issues.length > 0 ? { issues: error.issues } : {}) };
  ctx.status = status;
  ctx.body = body;
  if (status === 401) ctx.set('WWW-Authenticate', 'Bearer');
  if (error.retryable) ctx.set('Retry-After', '1');
}

/**
 * Outermost JSON error handling: thrown errors become `{code, message, issues?}` with their own
 * status; unmatched paths become 404 `bad_route`, a known path with the wrong method 405 with
 * `Allow`. Internal failures are logged with their cause and answered without details.
 */
export function jsonErrors(logger: Logger): Koa.Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (thrown) {
      const error = toAppError(thrown);
      if (error.httpStatus >= 500) logger.error({ err: thrown, method: ctx.method, path: ctx.path }, 'request failed');
      sendError(ctx, error);
      return;
    }
    if (ctx.body !== undefined && ctx.body !== null) return;
    if (ctx.status === 404) {
      ctx.status = 404;
      ctx.body = { code: 'bad_route', message: `no route for ${ctx.method} ${ctx.path}` } satisfies ErrorBody;
    } else if (ctx.status === 405) {
      ctx.body = { code: 'bad_route', message: `${ctx.method} is not allowed on ${ctx.path} (allowed: ${ctx.response.get('Allow') || 'none'})` } satisfies ErrorBody;
      ctx.status = 405;
    }
  };
}
