import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileMigrationProvider, Migrator, type Kysely, type MigrationResult } from 'kysely';

const migrationsFolder = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

export interface MigrationReport {
  readonly applied: readonly string[];
}

/**
 * Applies every pending migration in `migrations/` (files named `NNNN-topic.ts`, applied in name
 * order). Kysely's migrator takes a lock, so two processes starting together apply each once.
 */
export async function migrateToLatest<T>(db: Kysely<T>): Promise<MigrationReport> {
  const migrator = new Migrator({
    db,
    provider: new FileMigrationProvider({ fs, path, migrationFolder: migrationsFolder }),
    // Areas own number ranges (see migrations/README.md), so a lower number may land later.
    allowUnorderedMigrations: true,
  });
  const { error, results } = await migrator.migrateToLatest();
  const applied = (results ?? []).filter((r: MigrationResult) => r.status === 'Success').map((r) => r.migrationName);
  if (error) {
    const failed = (results ?? []).find((r) => r.status === 'Error');
    const what = failed ? `database migration ${failed.migrationName} failed` : 'database migrations could not run';
    throw new Error(`${what}: ${(error as Error).message ?? String(error)}`, {
      cause: error,
    });
  }
  return { applied };
}
