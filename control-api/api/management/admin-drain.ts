import type Router from '@koa/router';
import { z } from 'zod';
import { authenticate, requireOperator } from '../route-kit/auth.js';
import type { ManagementDeps } from '../route-kit/management-deps.js';
import type { OpenApiBuilder } from '../route-kit/openapi/builder.js';
import { errorResponses, ok, operation } from '../route-kit/openapi/operations.js';

/** Where the process stands in a drain (docs/operations.md). */
export interface DrainStatus {
  readonly draining: boolean;
  /** Calls up or being set up in this process's gateway (0 when it runs none). */
  readonly liveCalls: number;
  /** How long live calls may go on once the drain started, before they get a BYE. */
  readonly drainTimeoutMs: number;
}

/** The process's drain, as the composition root offers it (bin/platform.ts). */
export interface DrainControl {
  /** Starts the drain and the exit that follows it, as SIGTERM does; a second call changes nothing. */
  start(): DrainStatus;
  status(): DrainStatus;
}

export const drainStatusSchema = z.object({
  draining: z.boolean().describe('true once a drain started (SIGTERM or POST /v1/admin/drain)'),
  liveCalls: z.number().int().min(0).describe('calls up or being set up in this process\'s gateway'),
  drainTimeoutMs: z.number().int().min(0).describe('how long live calls may go on before they are ended with BYE (config `drainTimeoutMs`)'),
});

/**
 * `POST /v1/admin/drain` (operator only): the process stops taking calls (new INVITEs and OPTIONS
 * get 503 + Retry-After, /readyz 503), lets live calls end up to `drainTimeoutMs`, ends the rest
 * with BYE and exits. `GET` reads where it stands. Both act on the process that serves them.
 */
export function mountAdminDrainRoutes(router: Router, deps: ManagementDeps, drain: DrainControl): void {
  router.post('/admin/drain', async (ctx) => {
    requireOperator(await authenticate(ctx, deps.db, deps.operatorToken), 'drain the platform');
    ctx.status = 202;
    ctx.body = drain.start();
  });
  router.get('/admin/drain', async (ctx) => {
    requireOperator(await authenticate(ctx, deps.db, deps.operatorToken), 'read the drain state');
    ctx.body = drain.status();
  });
}

/** The routes' part of `/v1/openapi.json`. */
export function adminDrainOpenApi(b: OpenApiBuilder): void {
  const status = b.addZod('DrainStatus', drainStatusSchema, 'output');
  const tag = 'Admin';
  b.tag(tag, 'Operations on the platform process itself (operator token only): draining it for a restart (docs/operations.md).');
  b.path('/v1/admin/drain', 'post', operation({
    operationId: 'startDrain',
    summary: 'Drain this process and exit: new calls are refused with 503 + Retry-After, live calls may end within drainTimeoutMs, then get a BYE (operator token only)',
    tag,
    responses: { '202': { description: 'The drain has started (or was already running)', content: { 'application/json': { schema: status } } }, ...errorResponses(401, 403) },
  }));
  b.path('/v1/admin/drain', 'get', operation({
    operationId: 'getDrain',
    summary: 'Whether this process drains, and how many calls it still carries (operator token only)',
    tag,
    responses: { '200': ok('The drain state', status), ...errorResponses(401, 403) },
  }));
}
