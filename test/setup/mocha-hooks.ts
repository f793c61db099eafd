import { sharedClusterVariable, stopTestPostgres, testPostgres } from '../helpers/postgres-cluster.js';

/**
 * Runs once before the whole suite, in mocha's main process. In a parallel run (`--parallel`) it
 * starts the one PostgreSQL cluster every worker shares: workers are forked after this and inherit
 * its address. A serial run (one file while developing) starts the cluster only if a test asks.
 */
export async function mochaGlobalSetup(): Promise<void> {
  if (!process.argv.includes('--parallel')) return;
  const cluster = await testPostgres();
  process.env[sharedClusterVariable] = cluster.adminUrl;
}

/** Runs once after the whole suite: tears down shared real components. */
export async function mochaGlobalTeardown(): Promise<void> {
  await stopTestPostgres();
}
