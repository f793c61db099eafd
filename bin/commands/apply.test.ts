import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openStore } from '../../control-api/platform/store/database.js';
import { testPostgres } from '../../test/helpers/postgres-cluster.js';
import { runApplyCommand } from './apply.js';
import { seedEmbeddedDatabase } from '../../test/helpers/pglite-template.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const examples = path.join(repoRoot, 'examples/tenant');

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

describe('apply CLI command', function () {
  this.timeout(120_000);

  it('applies examples/tenant on embedded PGlite as a real process, then reports no change', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'vap-apply-cli-'));
    await seedEmbeddedDatabase(dataDir);
    const cli = async (...args: string[]): Promise<Run> => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'bin/cli.ts', 'apply', ...args], {
        cwd: repoRoot,
        env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '', CONFIG_FILE: '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const [code] = (await once(child, 'exit')) as [number | null];
      return { code: code ?? -1, stdout, stderr };
    };
    try {
      const first = await cli('-f', examples);
      assert.equal(first.code, 0, first.stderr);
      assert.match(first.stdout, /^created\s+Tenant\s+greenleaf/m);
      assert.match(first.stdout, /^created\s+Campaign\s+greenleaf\/delivery-reminders/m);
      assert.match(first.stdout, /25 created, 0 updated, 0 unchanged\n$/);
      const second = await cli('-f', examples, '--output', 'json');
      assert.equal(second.code, 0, second.stderr);
      const report = JSON.parse(second.stdout) as { changed: boolean; summary: Record<string, number> };
      assert.equal(report.changed, false);
      assert.deepEqual(report.summary, { created: 0, updated: 0, unchanged: 25 });
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  describe('against PostgreSQL (DATABASE_URL)', () => {
    let env: Record<string, string>;
    let dataDir: string;
    before(async () => {
      dataDir = mkdtempSync(path.join(tmpdir(), 'vap-apply-cli-'));
      env = { DATA_DIR: dataDir, DATABASE_URL: await (await testPostgres()).createDatabase() };
    });
    after(() => rmSync(dataDir, { recursive: true, force: true }));

    async function run(...args: string[]): Promise<Run> {
      let stdout = '';
      let stderr = '';
      const code = await runApplyCommand(args, { env, stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
      return { code, stdout, stderr };
    }

    it('--dry-run reports and writes nothing', async () => {
      const dry = await run('-f', path.join(examples, '00-tenant.yaml'), '--dry-run');
      assert.equal(dry.code, 0, dry.stderr);
      assert.match(dry.stdout, /2 created, 0 updated, 0 unchanged \(dry run: nothing was written\)/);
      const store = await openStore({ url: env['DATABASE_URL'] });
      try {
        assert.equal((await store.db.selectFrom('tenants').select('id').execute()).length, 0);
      } finally {
        await store.close();
      }
    });

    it('exits 65 naming the file, document and field of an invalid document, writing nothing', async () => {
      const file = path.join(dataDir, 'bad.yaml');
      writeFileSync(file, 'apiVersion: vap/v1\nkind: Tenant\nspec: {clientId: ok-tenant, name: OK}\n---\napiVersion: vap/v1\nkind: SpeechProfile\ntenant: ok-tenant\nspec: {name: v, language: hi-IN, gender: robot, provider: espeak-ng, voiceName: hi}\n');
      const res = await run('-f', file);
      assert.equal(res.code, 65);
      assert.match(res.stderr, /documents\[1\]\.spec\.gender: gender must be 'male' or 'female'/);
      assert.match(res.stderr, /nothing was written/);
    });

    it('exits 64 with usage for a missing -f or a path that does not exist', async () => {
      assert.equal((await run()).code, 64);
      const missing = await run('-f', path.join(dataDir, 'nope.yaml'));
      assert.equal(missing.code, 64);
      assert.match(missing.stderr, /no such file or directory/);
    });
  });
});
