import assert from 'node:assert/strict';
import pg from 'pg';
import { ensureAgendaSchema } from '../../control-api/features/campaigns/agenda-schema.js';
import { testPostgres } from '../helpers/postgres-cluster.js';

/**
 * Several platform nodes (or the control and worker roles of several) start together on one new
 * database: each makes sure Agenda's job table exists. Unlocked (the backend's repository
 * connecting 6 at a time, 5 rounds) 21 of 30 failed: "tuple concurrently updated" (the trigger's
 * `CREATE OR REPLACE FUNCTION`, first seen in test/system/edge-multi-node.test.ts) or "type ...
 * already exists" (`CREATE TABLE IF NOT EXISTS` racing itself).
 */
describe("Agenda's job table, created by several processes at once", function () {
  this.timeout(60_000);

  it('is created once, whoever comes first, and nobody fails', async () => {
    const url = await (await testPostgres()).createDatabase();
    // Separate connections, as separate processes have; repeated rounds to meet the race.
    for (let round = 0; round < 3; round++) {
      await Promise.all(Array.from({ length: 6 }, () => ensureAgendaSchema(url, `jobs_${round}`)));
    }
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const tables = await client.query<{ n: string }>("SELECT count(*) AS n FROM pg_tables WHERE tablename LIKE 'jobs\\_%'");
      assert.equal(Number(tables.rows[0]?.n), 3);
      const triggers = await client.query<{ n: string }>("SELECT count(*) AS n FROM pg_trigger WHERE tgrelid::regclass::text LIKE 'jobs\\_%'");
      assert.equal(Number(triggers.rows[0]?.n), 3);
      // This database's advisory locks only: the cluster is shared with test files running alongside.
      const locks = await client.query<{ n: string }>(
        "SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
      );
      assert.equal(Number(locks.rows[0]?.n), 0, 'the lock is released');
    } finally {
      await client.end();
    }
  });
});
