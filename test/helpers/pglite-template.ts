import { cpSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';

const repoRoot = path.resolve(import.meta.dirname, '../..');
/** One bare cluster per installed PGlite (its build changes the on-disk format), in the clone's own cache. */
const cacheDir = path.join(repoRoot, 'node_modules', '.cache', 'test-pglite');

let template: Promise<string> | undefined;

/**
 * Puts a bare, closed PGlite cluster at `<dataDir>/pglite`, where the platform and the CLI keep
 * their embedded database. A platform on a new DATA_DIR otherwise runs initdb in WebAssembly
 * first: about 5 s of the 9 s of CPU its start costs on the 2-core machine, paid again by every
 * test that starts one. Tests about that first start (platform-lifecycle's first case, the
 * fresh clone, the built artefact, the image steps) do not use it; everything after initdb
 * (migrations, the operator token, the roles) runs as on any new DATA_DIR.
 */
export async function seedEmbeddedDatabase(dataDir: string): Promise<void> {
  const target = path.join(dataDir, 'pglite');
  if (existsSync(target)) throw new Error(`${target} exists already: seed a new DATA_DIR only`);
  cpSync(await bareCluster(), target, { recursive: true });
}

function bareCluster(): Promise<string> {
  template ??= makeBareCluster();
  return template;
}

async function makeBareCluster(): Promise<string> {
  const wasm = path.join(repoRoot, 'node_modules', '@electric-sql', 'pglite', 'dist', 'pglite.wasm');
  const { mtimeMs, size } = statSync(wasm);
  const final = path.join(cacheDir, `${size}-${Math.round(mtimeMs)}`);
  if (existsSync(path.join(final, 'PG_VERSION'))) return final;
  // Test files run in parallel: each builds its own and the first rename wins.
  mkdirSync(cacheDir, { recursive: true });
  const building = mkdtempSync(path.join(cacheDir, 'building-'));
  const pglite = new PGlite(path.join(building, 'cluster'));
  await pglite.waitReady;
  await pglite.close();
  try {
    renameSync(path.join(building, 'cluster'), final);
  } catch (error) {
    if (!existsSync(path.join(final, 'PG_VERSION'))) throw error;
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
  return final;
}
