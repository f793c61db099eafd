import { PostgresJobRepository } from '@agendajs/postgres-backend';
import pg from 'pg';

/**
 * Key of the PostgreSQL advisory lock (session level) under which one process at a time creates
 * or updates Agenda's job table. Any 64-bit value no other part of the platform uses.
 */
const SCHEMA_LOCK_KEY = 7_152_015;

/**
 * Creates Agenda's job table, indexes and update trigger (the backend's own schema SQL, through
 * its repository) while holding an advisory lock. Agenda does this on every connect, without a
 * lock: two platform nodes starting together on one database ran `CREATE OR REPLACE FUNCTION` for
 * the trigger at once and one of them died with "tuple concurrently updated" (PostgreSQL updates
 * a catalog row in place and refuses a concurrent update of it). Behind the lock the second
 * process finds everything in place.
 */
export async function ensureAgendaSchema(url: string, tableName: string): Promise<void> {
  const lock = new pg.Client({ connectionString: url });
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock($1)', [SCHEMA_LOCK_KEY]);
    const repository = new PostgresJobRepository({ connectionString: url, tableName, ensureSchema: true });
    try {
      await repository.connect();
    } finally {
      await repository.close();
    }
  } finally {
    // Ending the session releases the lock too; unlocking first keeps the next process from
    // waiting for the disconnect.
    await lock.query('SELECT pg_advisory_unlock($1)', [SCHEMA_LOCK_KEY]).catch(() => undefined);
    await lock.end();
  }
}
