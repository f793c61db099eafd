import type Koa from 'koa';
import { AppError, errorCodes, type ErrorCode } from '../../../core/errors.js';

/**
 * Twirp v7 wire rules the campaign service follows (twitchtv/twirp docs/spec_v7.md): methods are
 * `POST <prefix>/<package>.<Service>/<Method>`, bodies are protobuf (`application/protobuf`) or
 * JSON (`application/json`) (twirp-codec.ts), and every error, whatever the request's encoding,
 * is `{"code", "msg", "meta"?}` as `application/json` with the code's fixed HTTP status.
 */
export interface TwirpErrorBody {
  readonly code: ErrorCode;
  readonly msg: string;
  readonly meta?: Readonly<Record<string, string>>;
}

export function twirpStatus(code: ErrorCode): number {
  return errorCodes[code];
}

export function writeTwirpError(ctx: Koa.Context, error: AppError): void {
  const meta = { ...error.meta };
  const body: TwirpErrorBody = { code: error.code, msg: error.message, ...(Object.keys(meta).length > 0 ? { meta } : {}) };
  ctx.status = twirpStatus(error.code);
  ctx.type = 'application/json';
  ctx.body = body;
  if (error.code === 'unavailable' || error.code === 'resource_exhausted') ctx.set('Retry-After', '1');
}

/** Twirp's `bad_route`, with the route in meta as Twirp servers report it. */
export function badRoute(ctx: Koa.Context, msg: string): AppError {
  return new AppError('bad_route', msg, { meta: { twirp_invalid_route: `${ctx.method} ${ctx.path}` } });
}
