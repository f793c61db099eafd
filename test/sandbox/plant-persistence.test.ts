import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openStore, type OpenStoreOptions, type Store } from '../../control-api/platform/store/database.js';
import { migrateToLatest } from '../../control-api/platform/store/migrate.js';
import { testPostgres } from '../helpers/postgres-cluster.js';
import { PlantClient } from './plant-client.js';

const TOKEN = 'persisted-static-token-0123456789';

async function openMigrated(options: OpenStoreOptions): Promise<Store> {
  const store = await openStore(options);
  await migrateToLatest(store.db);
  return store;
}

describe('plants survive a restart', function () {
  this.timeout(60_000);
  let pgliteDir: string;
  before(() => {
    pgliteDir = mkdtempSync(path.join(tmpdir(), 'vap-plants-'));
  });
  after(() => rmSync(pgliteDir, { recursive: true, force: true }));

  const targets: ReadonlyArray<[string, () => Promise<OpenStoreOptions>]> = [
    ['pglite data directory', async () => ({ pgliteDir })],
    ['postgres database', async () => ({ url: await (await testPostgres()).createDatabase(), poolSize: 2 })],
  ];
  for (const [what, options] of targets) {
    it(`keeps a plant in the same ${what} after the store is closed and reopened`, async () => {
      const opts = await options();
      let store = await openMigrated(opts);
      let client = await PlantClient.start(store, [TOKEN]);
      const created = await client.call('POST', '/plants', { token: TOKEN, raw: '{"id":9223372036854775807,"name":"Olive","tag":"tree"}', headers: { 'Content-Type': 'application/json' } });
      assert.equal(created.status, 200);
      await client.close();
      await store.close();

      store = await openMigrated(opts);
      client = await PlantClient.start(store, [TOKEN]);
      try {
        assert.deepEqual((await client.call('GET', '/plants', { token: TOKEN })).body, [{ name: 'Olive', tag: 'tree' }]);
        assert.equal((await client.call('DELETE', '/plants/9223372036854775807', { token: TOKEN })).status, 204);
      } finally {
        await client.close();
        await store.close();
      }
    });
  }
});

describe('plant store when the database fails', function () {
  // An in-memory PGlite starts and migrates in about 4 s idle; 20 s were not enough in a CI run
  // with the cores shared by six files.
  this.timeout(60_000);
  it('answers 500 with an Error body and no internal detail', async () => {
    const store = await openMigrated({ pgliteDir: 'memory://' });
    const client = await PlantClient.start(store, [TOKEN]);
    try {
      await store.close();
      const list = await client.call('GET', '/plants', { token: TOKEN });
      assert.equal(list.status, 500);
      assert.deepEqual(list.body, { error: 500, message: 'internal error' });
      const created = await client.call('POST', '/plants', { token: TOKEN, json: { id: 1, name: 'x' } });
      assert.equal(created.status, 500);
      const deleted = await client.call('DELETE', '/plants/1', { token: TOKEN });
      assert.equal(deleted.status, 500);
    } finally {
      await client.close();
    }
  });
});
