import type { RoleName } from '../../core/config/schema.js';
import { startControlRole } from './control.js';
import { startGatewayRole } from './gateway.js';
import { startSandboxRole } from './sandbox.js';
import { startWorkerRole } from './worker.js';
import type { RoleStarter } from './role.js';

/** Which starter runs each role. */
export const roleStarters: Readonly<Record<RoleName, RoleStarter>> = {
  gateway: startGatewayRole,
  control: startControlRole,
  sandbox: startSandboxRole,
  worker: startWorkerRole,
};

/**
 * Start order (stop is the reverse). The worker comes after the gateway because it dials through
 * the gateway's originator (bin/originator-registry.ts): started first, its first poll claimed the
 * calls already due (after a restart, all of them) while nothing was bound, and each failed with
 * 503; stopped last, it kept claiming calls after the gateway had gone. Inbound calls may arrive
 * before the worker runs: what they leave for it (post-call analysis) waits in the store.
 */
export const roleStartOrder: readonly RoleName[] = ['control', 'sandbox', 'gateway', 'worker'];
