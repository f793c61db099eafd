import { PGlite } from '@electric-sql/pglite';

/**
 * A bare PGlite cluster as a gzip tar dump (about 4 MB), made once per process. A new embedded
 * database otherwise begins with initdb in WebAssembly: about 5 s of CPU, measured on the 2-core
 * machine, where starting from this dump costs about 1.2 s. Simulations open an in-memory store
 * per run and gain the most; the dump holds no data, only the empty cluster initdb writes.
 */
let seed: Promise<Blob> | undefined;

export function bareClusterSeed(): Promise<Blob> {
  seed ??= makeSeed().catch((error: unknown) => {
    seed = undefined;
    throw error;
  });
  return seed;
}

async function makeSeed(): Promise<Blob> {
  const pglite = new PGlite();
  try {
    await pglite.waitReady;
    return await pglite.dumpDataDir('gzip');
  } finally {
    await pglite.close();
  }
}
