import type Router from '@koa/router';
import type Koa from 'koa';
import { AppError } from '../../../core/errors.js';
import { flawMessage, printable, textFlaw } from './acceptable-json.js';

/**
 * Path and query parameters are decoded from percent-encoding (`%00` is U+0000) before routes see
 * them; these guards refuse what PostgreSQL cannot store (acceptable-json.ts) before any route runs,
 * naming the parameter, so no route needs its own check.
 */
function refuse(name: string, message: string): AppError {
  return new AppError('invalid_argument', message, { issues: [{ path: name, message }], meta: { argument: name } });
}

/** Every query parameter name and value (Koa's `ctx.query` is the decoded form). */
export function storableQuery(): Koa.Middleware {
  return async (ctx, next) => {
    for (const [name, value] of Object.entries(ctx.query)) {
      const nameFlaw = textFlaw(name);
      if (nameFlaw) throw refuse(printable(name), flawMessage(nameFlaw, 'a query parameter name'));
      for (const v of Array.isArray(value) ? value : [value]) {
        const flaw = v === undefined ? undefined : textFlaw(v);
        if (flaw) throw refuse(name, flawMessage(flaw, `query parameter ${name}`));
      }
    }
    await next();
  };
}

/**
 * Registers a check for every path parameter the router's routes declare (`:clientId`, `:id`, ...);
 * call it once every route is mounted. @koa/router runs it before the route's own middleware.
 */
export function guardPathParameters(router: Router): Router {
  const names = new Set<string>();
  for (const layer of router.stack) for (const p of layer.paramNames) names.add(String(p.name));
  for (const name of names) {
    router.param(name, (value: string, _ctx, next) => {
      const flaw = textFlaw(value);
      if (flaw) throw refuse(name, flawMessage(flaw, `path parameter ${name}`));
      return next();
    });
  }
  return router;
}
