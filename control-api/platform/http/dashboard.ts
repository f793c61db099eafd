import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type Koa from 'koa';
import koaStatic from 'koa-static';

/**
 * Paths the dashboard never answers, whatever the API routers did with them: an unknown `/v1/...`
 * must stay a JSON 404 from the API, never the dashboard's HTML.
 */
const apiPrefixes = ['/v1', '/api', '/healthz', '/readyz', '/metrics'] as const;
const isApiPath = (path: string): boolean => apiPrefixes.some((p) => path === p || path.startsWith(`${p}/`));

/**
 * Headers of every dashboard response. The page only talks to this origin's API and, for web
 * calls, to the gateway's SIP WebSocket (another port, hence `ws:`/`wss:` in connect-src).
 */
const securityHeaders: Readonly<Record<string, string>> = {
  'Content-Security-Policy':
    "default-src 'self'; connect-src 'self' ws: wss:; media-src 'self' blob:; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
};

/** True when `dir` holds a built dashboard (Vite's output: index.html and hashed assets). */
export const isBuiltDashboard = (dir: string): boolean => existsSync(join(dir, 'index.html'));

/**
 * Serves the built dashboard (web/, built by scripts/build-dist.mjs into dist/dashboard) at `/`.
 * Files under `/assets/` carry a content hash in their names, so they are cached for a year;
 * `index.html` is revalidated on every load, so a new build is picked up at once. A GET for a
 * client-side route (`/calls/123`) that is no file answers index.html when the client accepts HTML
 * (the page's router takes it from there); anything else falls through to the API's 404.
 * Mount it after every API router.
 */
export function dashboard(root: string): Koa.Middleware {
  const files = koaStatic(root, {
    index: 'index.html',
    setHeaders: (res, path) => {
      const hashed = path.includes(`${join(root, 'assets')}`);
      res.setHeader('Cache-Control', hashed ? 'public, max-age=31536000, immutable' : 'no-cache');
      for (const [name, value] of Object.entries(securityHeaders)) res.setHeader(name, value);
    },
  });
  return async (ctx, next) => {
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || isApiPath(ctx.path)) return next();
    await files(ctx, async () => {
      const clientRoute = !ctx.path.startsWith('/assets/') && ctx.accepts('html') === 'html';
      if (!clientRoute) return next();
      const asked = ctx.path;
      ctx.path = '/';
      try {
        await files(ctx, next);
      } finally {
        ctx.path = asked;
      }
    });
  };
}
