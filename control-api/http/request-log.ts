import type Koa from 'koa';
import type { Logger } from '../../core/logger.js';
import { counter, histogram } from '../../core/metrics.js';

const requests = counter('http_requests_total', 'HTTP requests served', ['app', 'method', 'status']);
const latency = histogram('http_request_duration_seconds', 'HTTP request latency', ['app'], [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]);

/** One structured line per request (never headers or bodies, which may carry secrets) plus metrics. */
export function requestLog(app: string, logger: Logger): Koa.Middleware {
  return async (ctx, next) => {
    const start = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      requests.inc({ app, method: ctx.method, status: String(ctx.status) });
      latency.observe({ app }, seconds);
      if (ctx.path !== '/healthz' && ctx.path !== '/metrics') {
        logger.debug({ app, method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(seconds * 1000) }, 'http request');
      }
    }
  };
}
