import path from 'node:path';
import type { PlatformConfig } from '../../core/config/schema.js';
import { isAppError } from '../../core/errors.js';
import { openStore, type Store } from '../../control-api/platform/store/database.js';
import { migrateToLatest } from '../../control-api/platform/store/migrate.js';

/** Exit code when the embedded database is held by another process (EX_TEMPFAIL: retry later). */
export const storeBusyExitCode = 75;

export class StoreBusyError extends Error {}

/**
 * Opens the configured store for a CLI command, the same way the platform does, and migrates it.
 * With embedded PGlite the directory lock refuses a data directory another process holds.
 */
export async function openCliStore(config: PlatformConfig): Promise<Store> {
  let store: Store;
  try {
    store = await openStore({
      ...(config.database.url ? { url: config.database.url } : {}),
      pgliteDir: path.join(config.dataDir, 'pglite'),
      poolSize: 2,
    });
  } catch (error) {
    if (isAppError(error) && error.code === 'unavailable') throw new StoreBusyError(error.message);
    throw error;
  }
  try {
    await migrateToLatest(store.db);
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}
