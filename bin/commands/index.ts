import { applyCommand } from './apply.js';
import type { CliCommand } from './command.js';
import { simulateCommand } from './simulate.js';
import { tokenCommand } from './token.js';

/** Every `npm run cli -- <name>` command; each lives in its own file beside this one. */
export const commands: Readonly<Record<string, CliCommand>> = {
  apply: applyCommand,
  simulate: simulateCommand,
  token: tokenCommand,
};
