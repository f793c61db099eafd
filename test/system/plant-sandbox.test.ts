import assert from 'node:assert/strict';
import { spawn, execFile } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PlantClient } from '../sandbox/plant-client.js';
import { seedEmbeddedDatabase } from '../helpers/pglite-template.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const STATIC_TOKEN = 'system-test-static-token-0123456789';

interface Cli {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function cli(env: Record<string, string>, args: string[]): Promise<Cli> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'bin/cli.ts', ...args], { cwd: repoRoot, env: { ...process.env, ...env } }, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

interface Running {
  readonly child: ReturnType<typeof spawn>;
  readonly port: number;
  stop(): Promise<number | null>;
}

/** Starts `bin/platform.ts --role sandbox` and waits for the "plant sandbox listening" line. */
async function startSandbox(env: Record<string, string>): Promise<Running> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/platform.ts', '--role', 'sandbox'], {
    cwd: repoRoot,
    env: { ...process.env, LOG_LEVEL: 'info', SANDBOX_HOST: '127.0.0.1', SANDBOX_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.includes('"plant sandbox listening"'));
      if (line) resolve(Number((JSON.parse(line) as { port: number }).port));
    });
    child.once('exit', (code) => reject(new Error(`platform exited ${code}: ${err}`)));
  });
  return {
    child,
    port,
    async stop() {
      child.kill('SIGTERM');
      const [code] = (await once(child, 'exit')) as [number | null];
      assert.ok(!out.includes(STATIC_TOKEN) && !err.includes(STATIC_TOKEN), 'tokens are never logged');
      return code;
    },
  };
}

describe('plant sandbox in the real platform process (--role sandbox)', function () {
  this.timeout(180_000);
  let dataDir: string;
  let env: Record<string, string>;
  before(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'vap-sandbox-'));
    await seedEmbeddedDatabase(dataDir);
    env = { DATA_DIR: dataDir, SANDBOX_TOKENS: STATIC_TOKEN, DATABASE_URL: '' };
  });
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it('serves plants to a SANDBOX_TOKENS token and to a CLI-issued token, keeps them across a restart, and honours revocation', async () => {
    const created = await cli(env, ['token', 'create', '--tenant', 'acme', '--scope', 'sandbox', '--name', 'system test']);
    assert.equal(created.code, 0, created.stderr);
    const issued = created.stdout.trim();
    assert.match(issued, /^vap_[A-Za-z0-9_-]{43}$/);
    assert.match(created.stderr, /created tenant acme/);
    const tokenId = /token ([0-9a-f-]{36})/.exec(created.stderr)?.[1];
    assert.ok(tokenId);

    let platform = await startSandbox(env);
    try {
      const client = PlantClient.at(`http://127.0.0.1:${platform.port}`);
      assert.deepEqual((await client.call('POST', '/plants', { token: STATIC_TOKEN, json: { id: 1, name: 'Aloe', tag: 'succulent' } })).body, {
        name: 'Aloe',
        tag: 'succulent',
      });
      assert.equal((await client.call('POST', '/plants', { token: STATIC_TOKEN, json: { id: 2, name: 'Basil' } })).status, 200);
      assert.deepEqual((await client.call('GET', '/plants?limit=5', { token: STATIC_TOKEN })).body, [{ name: 'Aloe', tag: 'succulent' }, { name: 'Basil' }]);
      assert.equal((await client.call('DELETE', '/plants/2', { token: STATIC_TOKEN })).status, 204);
      assert.equal((await client.call('POST', '/plants', { token: issued, json: { id: 1, name: 'Cedar' } })).status, 200);
      assert.deepEqual((await client.call('GET', '/plants', { token: issued })).body, [{ name: 'Cedar' }]);
      assert.equal((await client.call('GET', '/plants', { token: 'not-a-configured-token-at-all' })).status, 401);

      // PGlite has one process per data directory: the CLI refuses while the platform runs.
      const busy = await cli(env, ['token', 'create', '--tenant', 'acme', '--scope', 'sandbox']);
      assert.equal(busy.code, 75);
      assert.match(busy.stderr, /is in use by process \d+ \(a running platform\?\)/);
    } finally {
      assert.equal(await platform.stop(), 0);
    }

    const revoked = await cli(env, ['token', 'revoke', '--tenant', 'acme', '--id', tokenId]);
    assert.equal(revoked.code, 0, revoked.stderr);

    platform = await startSandbox(env);
    try {
      const client = PlantClient.at(`http://127.0.0.1:${platform.port}`);
      assert.deepEqual((await client.call('GET', '/plants', { token: STATIC_TOKEN })).body, [{ name: 'Aloe', tag: 'succulent' }]);
      assert.equal((await client.call('GET', '/plants', { token: issued })).status, 401);
    } finally {
      assert.equal(await platform.stop(), 0);
    }
  });
});
