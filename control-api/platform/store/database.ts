import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { PGlite, types as pgliteTypes, type PGliteOptions } from '@electric-sql/pglite';
import { Kysely, PostgresDialect, type Dialect } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import pg from 'pg';
import { acquireDirectoryLock, type DirectoryLock } from './directory-lock.js';
import { yieldingToIo } from './pglite-io-yield.js';
import type { Database } from './schema.js';

// int8 as BigInt, so int64 identifiers (plant ids, counters) never lose precision; PGlite does the same.
pg.types.setTypeParser(pg.types.builtins.INT8, (value: string) => BigInt(value));

export type StoreKind = 'postgres' | 'pglite';

export interface Store {
  readonly db: Kysely<Database>;
  readonly kind: StoreKind;
  /** Connection string for components that bring their own driver (Agenda); absent on PGlite. */
  readonly url?: string;
  close(): Promise<void>;
}

export interface OpenStoreOptions {
  /** PostgreSQL connection string. */
  readonly url?: string;
  /** Directory for embedded PGlite files when no url is given; `memory://` keeps it in memory. */
  readonly pgliteDir?: string;
  readonly poolSize?: number;
  /** A cluster dump (`bareClusterSeed()`) an in-memory PGlite starts from instead of running initdb. */
  readonly seed?: Blob;
}

/** Opens PostgreSQL when a URL is given, otherwise embedded PGlite persisted on disk. */
export async function openStore(options: OpenStoreOptions): Promise<Store> {
  if (options.url) {
    const pool = new pg.Pool({ connectionString: options.url, max: options.poolSize ?? 10 });
    // A broken idle connection must not crash the process; the pool replaces it.
    pool.on('error', () => undefined);
    return wrap(new PostgresDialect({ pool }), 'postgres', options.url);
  }
  const dir = options.pgliteDir ?? 'memory://';
  // Same int8 parsing as pg above: PGlite would otherwise return numbers below 2^53 and bigints above.
  const pgliteOptions: PGliteOptions = { parsers: { [pgliteTypes.INT8]: (value: string) => BigInt(value) } };
  if (dir === 'memory://') {
    const pglite = new PGlite({ ...pgliteOptions, ...(options.seed ? { loadDataDir: options.seed } : {}) });
    await pglite.waitReady;
    return wrap(yieldingToIo(new PGliteDialect(pglite)), 'pglite');
  }
  const absolute = resolve(dir);
  mkdirSync(absolute, { recursive: true });
  const lock = acquireDirectoryLock(`${absolute}.lock`, `the embedded database ${absolute}`);
  try {
    const pglite = new PGlite(absolute, pgliteOptions);
    await pglite.waitReady;
    return wrap(yieldingToIo(new PGliteDialect(pglite)), 'pglite', undefined, lock);
  } catch (error) {
    lock.release();
    throw error;
  }
}

function wrap(dialect: Dialect, kind: StoreKind, url?: string, lock?: DirectoryLock): Store {
  const db = new Kysely<Database>({ dialect });
  let closed = false;
  return {
    db,
    kind,
    ...(url ? { url } : {}),
    async close() {
      if (closed) return;
      closed = true;
      try {
        await db.destroy();
      } finally {
        lock?.release();
      }
    },
  };
}
