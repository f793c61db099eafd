import type { RoleName } from '../../core/config/schema.js';
import { startControlRole } from './control.js';
import { startSandboxRole } from './sandbox.js';
import { startWorkerRole } from './worker.js';
import type { RoleStarter } from './role.js';

/** Which starter runs each role. Roles not built yet say so at start instead of pretending. */
const notBuiltYet =
  (name: RoleName): RoleStarter =>
  async (ctx) => {
    ctx.logger.warn({ role: name }, `${name} role is not available in this build yet; skipping`);
    return { name, stop: async () => undefined };
  };

export const roleStarters: Readonly<Record<RoleName, RoleStarter>> = {
  gateway: notBuiltYet('gateway'),
  control: startControlRole,
  sandbox: startSandboxRole,
  worker: startWorkerRole,
};

/** Start order: storage users first, the SIP gateway last so calls only arrive once all is up. */
export const roleStartOrder: readonly RoleName[] = ['worker', 'control', 'sandbox', 'gateway'];
