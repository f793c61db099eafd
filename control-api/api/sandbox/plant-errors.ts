import type Koa from 'koa';
import type { Logger } from '../../../core/logger.js';

/**
 * The statuses the plant store answers with an Error body. The body's `error` (int32) repeats the
 * HTTP status, so a client that only sees the body still knows what happened (docs/api.md).
 */
export const plantErrorStatuses = [400, 401, 404, 405, 413, 415, 500] as const;
export type PlantErrorStatus = (typeof plantErrorStatuses)[number];

/** The spec's Error resource: `{ error: int32, message: string }`. */
export interface PlantErrorBody {
  readonly error: number;
  readonly message: string;
}

export class PlantApiError extends Error {
  constructor(
    readonly status: PlantErrorStatus,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = 'PlantApiError';
  }
}

export const badRequest = (message: string): PlantApiError => new PlantApiError(400, message);

/** RFC 6750 sec. 3: a 401 names the scheme; `invalid_token` only when a token was presented. */
export function unauthorized(message: string, tokenPresented: boolean): PlantApiError {
  const challenge = tokenPresented ? 'Bearer realm="plant-store", error="invalid_token"' : 'Bearer realm="plant-store"';
  return new PlantApiError(401, message, { 'WWW-Authenticate': challenge });
}

/**
 * Outermost middleware: every failure, and every request no route answered, leaves as an Error
 * body with `Content-Type: application/json`. Unexpected failures are logged and never leak detail.
 */
export function plantErrorHandler(logger: Logger): Koa.Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && (ctx.body === null || ctx.body === undefined)) throw new PlantApiError(404, `no route for ${ctx.method} ${ctx.path}`);
    } catch (error) {
      let failure: PlantApiError;
      if (error instanceof PlantApiError) {
        failure = error;
      } else {
        logger.error({ err: error, method: ctx.method, path: ctx.path }, 'plant sandbox request failed');
        failure = new PlantApiError(500, 'internal error');
      }
      ctx.status = failure.status;
      ctx.set(failure.headers);
      ctx.type = 'application/json';
      ctx.body = { error: failure.status, message: failure.message } satisfies PlantErrorBody;
      // A body refused unread (413, 415, 401) is read away before this answer goes out
      // (drainUnreadBody), so the connection stays usable and the client sees the answer.
    }
  };
}
