import { stopTestPostgres } from '../helpers/postgres-cluster.js';

/** Runs once after the whole suite: tears down shared real components. */
export async function mochaGlobalTeardown(): Promise<void> {
  await stopTestPostgres();
}
