import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openStore } from '../../control-api/platform/store/database.js';
import { verifyToken } from '../../control-api/model/tenants/api-tokens.js';
import { testPostgres } from '../../test/helpers/postgres-cluster.js';
import { runTokenCommand } from './token.js';

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

describe('token CLI command against PostgreSQL (DATABASE_URL)', function () {
  this.timeout(60_000);
  let env: Record<string, string>;
  let dataDir: string;
  before(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'vap-token-cli-'));
    env = { DATA_DIR: dataDir, DATABASE_URL: await (await testPostgres()).createDatabase() };
  });
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  async function run(...args: string[]): Promise<Run> {
    let stdout = '';
    let stderr = '';
    const code = await runTokenCommand(args, { env, stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
    return { code, stdout, stderr };
  }

  it('creates the tenant and a token that verifies with its scopes and expiry, printing it once on stdout', async () => {
    const before = Date.now();
    const created = await run('create', '--tenant', 'acme', '--scope', 'sandbox,campaign', '--name', 'laptop', '--expires-in-days', '2');
    assert.equal(created.code, 0, created.stderr);
    const token = created.stdout.trim();
    assert.ok(!created.stderr.includes(token), 'the token goes to stdout only');
    assert.match(created.stderr, /created tenant acme/);
    const store = await openStore({ url: env['DATABASE_URL'] });
    try {
      const owner = await verifyToken(store.db, token, 'sandbox');
      assert.ok(owner);
      assert.deepEqual([...owner.scopes].sort(), ['campaign', 'sandbox']);
      const row = await store.db.selectFrom('api_tokens').select(['name', 'expires_at', 'token_hash']).where('id', '=', owner.tokenId).executeTakeFirstOrThrow();
      assert.equal(row.name, 'laptop');
      assert.notEqual(row.token_hash, token);
      const days = (row.expires_at!.getTime() - before) / 86_400_000;
      assert.ok(days > 1.99 && days < 2.01, `expires in ${days} days`);
      assert.equal(await verifyToken(store.db, token, 'sandbox', new Date(before + 3 * 86_400_000)), null);
    } finally {
      await store.close();
    }
  });

  it('reuses an existing tenant, lists tokens without secrets, and revokes one', async () => {
    const created = await run('create', '--tenant', 'acme', '--scope', 'sandbox');
    assert.equal(created.code, 0);
    assert.ok(!created.stderr.includes('created tenant'));
    const id = /token ([0-9a-f-]{36})/.exec(created.stderr)?.[1];
    assert.ok(id);
    const listed = await run('list', '--tenant', 'acme');
    assert.equal(listed.code, 0);
    assert.equal(listed.stdout.trim().split('\n').length, 2);
    assert.ok(!listed.stdout.includes(created.stdout.trim()));
    assert.match(listed.stdout, new RegExp(`${id}\\s+vap_\\S+\\.\\.\\.\\s+active`));
    assert.equal((await run('revoke', '--tenant', 'acme', '--id', id)).code, 0);
    assert.match((await run('list', '--tenant', 'acme')).stdout, new RegExp(`${id}\\s+\\S+\\s+revoked`));
    const again = await run('revoke', '--tenant', 'acme', '--id', id);
    assert.equal(again.code, 64);
    assert.match(again.stderr, /no active token/);
  });

  const refusals: ReadonlyArray<[string, string[], RegExp]> = [
    ['a missing scope', ['create', '--tenant', 'acme'], /--scope is required/],
    ['an unknown scope', ['create', '--tenant', 'acme', '--scope', 'admin'], /--scope: expected one or more of/],
    ['an invalid client ID', ['create', '--tenant', 'Acme Corp', '--scope', 'sandbox'], /--tenant: expected a client ID/],
    ['a bad expiry', ['create', '--tenant', 'acme', '--scope', 'sandbox', '--expires-in-days', '0'], /--expires-in-days/],
    ['an unknown tenant with --no-create-tenant', ['create', '--tenant', 'globex', '--scope', 'sandbox', '--no-create-tenant'], /tenant "globex" does not exist/],
    ['an unknown action', ['rotate', '--tenant', 'acme'], /unknown token action "rotate"/],
    ['an unknown option', ['create', '--tenant', 'acme', '--scope', 'sandbox', '--owner', 'x'], /Unknown option '--owner'/],
    ['no action', [], /usage:/],
  ];
  for (const [what, args, message] of refusals) {
    it(`refuses ${what} with exit code 64 and a message`, async () => {
      const result = await run(...args);
      assert.equal(result.code, 64);
      assert.match(result.stderr, message);
      assert.equal(result.stdout, '');
    });
  }
});
