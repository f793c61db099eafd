import { openStore, type Store, type StoreKind } from '../../control-api/platform/store/database.js';
import { bareClusterSeed } from '../../control-api/platform/store/pglite-seed.js';
import { migrateToLatest } from '../../control-api/platform/store/migrate.js';
import { testPostgres } from './postgres-cluster.js';

/** A fresh, migrated store: a new database in the private cluster, or an in-memory PGlite. */
export async function freshStore(kind: StoreKind): Promise<Store> {
  const store =
    kind === 'postgres'
      ? await openStore({ url: await (await testPostgres()).createDatabase(), poolSize: 5 })
      : await openStore({ pgliteDir: 'memory://', seed: await bareClusterSeed() });
  await migrateToLatest(store.db);
  return store;
}

export const storeKinds: readonly StoreKind[] = ['postgres', 'pglite'];

/**
 * Declares the same suite once per store kind, each with its own fresh database:
 * `forEachStore('tokens', (getStore) => { it(...) })`.
 */
export function forEachStore(title: string, body: (store: () => Store) => void): void {
  for (const kind of storeKinds) {
    describe(`${title} [${kind}]`, function () {
      let store: Store | undefined;
      before(async function () {
        this.timeout(60_000);
        store = await freshStore(kind);
      });
      after(async () => {
        await store?.close();
      });
      body(() => {
        if (!store) throw new Error('store not ready');
        return store;
      });
    });
  }
}
