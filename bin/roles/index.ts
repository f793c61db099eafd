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

/** Start order: storage users first, the SIP gateway last so calls only arrive once all is up. */
export const roleStartOrder: readonly RoleName[] = ['worker', 'control', 'sandbox', 'gateway'];
