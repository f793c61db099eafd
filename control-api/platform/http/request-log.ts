import { randomUUID } from 'node:crypto';
import type Koa from 'koa';
import type { Logger } from '../../../core/logger.js';
import { counter, histogram } from '../../../core/metrics.js';

const requests = counter('http_requests_total', 'HTTP requests served, by matched route pattern', ['app', 'method', 'route', 'status']);
const latency = histogram(
  'http_request_duration_seconds',
  'HTTP request latency by matched route pattern',
  ['app', 'method', 'route'],
  [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
);

/** The route label of a request no router matched (never the raw path: label values must stay few). */
export const UNMATCHED_ROUTE = 'unmatched';

/** Probes that would drown the access log; they are logged at debug level. */
const probePaths = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * Paths whose last segment is a credential (a signed Master Report download link,
 * reports/download-links.ts): logged with the segment replaced, since secrets are never logged.
 */
const credentialPaths = /^(\/v1\/report-downloads\/)[^/]+$/;
const loggedPath = (path: string): string => {
  const shown = path.replace(credentialPaths, '$1<redacted>');
  return shown.length > 200 ? `${shown.slice(0, 200)}...` : shown;
};

/**
 * An incoming X-Request-Id is kept when it looks like an id (a proxy's or the client's), so one
 * id follows the request across hops; anything else (too long, spaces, control characters) is
 * replaced, so a client cannot write arbitrary text into our logs.
 */
const saneRequestId = /^[A-Za-z0-9][A-Za-z0-9._:+/=-]{0,127}$/;

export interface RequestState {
  /** Set by this middleware; echoed in the X-Request-Id response header. */
  requestId?: string;
  /** The tenant the request acts for, once authentication or the address names it (noteTenant). */
  tenantId?: string;
  /** Route pattern for handlers outside @koa/router (the Twirp service). */
  route?: string;
}

/** Records the tenant a request acts for, for its access log line. */
export function noteTenant(ctx: { state: unknown }, tenantId: string): void {
  (ctx.state as RequestState).tenantId = tenantId;
}

/** Names the route of a request served outside @koa/router. */
export function noteRoute(ctx: { state: unknown }, route: string): void {
  (ctx.state as RequestState).route = route;
}

/** The matched route pattern: @koa/router's `_matchedRoute`, a handler's own, or the constant for none. */
export function routeOf(ctx: Koa.Context): string {
  const matched = (ctx as Koa.Context & { _matchedRoute?: string | RegExp })._matchedRoute;
  if (matched !== undefined) return String(matched);
  return (ctx.state as RequestState).route ?? UNMATCHED_ROUTE;
}

/**
 * The access log: one info line per request with its request id, method, route pattern, path,
 * status, duration and tenant (never headers, query strings or bodies, which may carry secrets),
 * plus the request counter and the latency histogram by route.
 */
export function requestLog(app: string, logger: Logger): Koa.Middleware {
  return async (ctx, next) => {
    const start = process.hrtime.bigint();
    const incoming = ctx.get('X-Request-Id');
    const requestId = saneRequestId.test(incoming) ? incoming : randomUUID();
    const state = ctx.state as RequestState;
    state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    try {
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      const route = routeOf(ctx);
      requests.inc({ app, method: ctx.method, route, status: String(ctx.status) });
      latency.observe({ app, method: ctx.method, route }, seconds);
      const line = {
        app,
        requestId,
        method: ctx.method,
        route,
        path: loggedPath(ctx.path),
        status: ctx.status,
        ms: Math.round(seconds * 1000),
        ...(state.tenantId ? { tenantId: state.tenantId } : {}),
      };
      if (probePaths.has(ctx.path)) logger.debug(line, 'http request');
      else logger.info(line, 'http request');
    }
  };
}
