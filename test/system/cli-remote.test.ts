import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runApplyCommand } from '../../bin/commands/apply.js';
import { runTokenCommand } from '../../bin/commands/token.js';
import { spawnPlatform, waitForLine, type PlatformProcess } from '../helpers/platform-process.js';
import { seedEmbeddedDatabase } from '../helpers/pglite-template.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const examples = path.join(repoRoot, 'examples/tenant');

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** `npm run cli -- ...` as a real process (the same command line npm runs). */
async function cliProcess(args: readonly string[], env: Record<string, string> = {}): Promise<Run> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/cli.ts', ...args], {
    cwd: repoRoot,
    env: { ...process.env, VAP_SERVER: '', VAP_TOKEN: '', CONFIG_FILE: '', DATABASE_URL: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code: code ?? -1, stdout, stderr };
}

describe('CLI: help, version', function () {
  this.timeout(60_000);

  it('--help and -h print the commands and exit 0; --version prints package.json version', async () => {
    const version = (JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;
    for (const flag of ['--help', '-h']) {
      const help = await cliProcess([flag]);
      assert.equal(help.code, 0, help.stderr);
      assert.match(help.stdout, /^usage: npm run cli -- <command>/);
      assert.match(help.stdout, /^ {2}apply /m);
      assert.match(help.stdout, /^ {2}token /m);
    }
    const shown = await cliProcess(['--version']);
    assert.equal(shown.code, 0);
    assert.equal(shown.stdout, `${version}\n`);
  });

  it('gives each command its help (help <command> or <command> --help) and refuses an unknown one with 64', async () => {
    const apply = await cliProcess(['help', 'apply']);
    assert.equal(apply.code, 0);
    assert.match(apply.stdout, /--server <url>/);
    const token = await cliProcess(['token', '-h']);
    assert.equal(token.code, 0);
    assert.match(token.stdout, /VAP_TOKEN/);
    const unknown = await cliProcess(['constructor']);
    assert.equal(unknown.code, 64);
    assert.match(unknown.stderr, /unknown command "constructor"/);
  });
});

describe('CLI apply and token against a running platform (--server)', function () {
  this.timeout(180_000);
  let platform: PlatformProcess;
  let dataDir: string;
  let server: string;
  let operator: string;

  const apply = async (args: readonly string[], env: Record<string, string | undefined> = {}): Promise<Run> => {
    let stdout = '';
    let stderr = '';
    const code = await runApplyCommand(args, { env, stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
    return { code, stdout, stderr };
  };
  const token = async (args: readonly string[], env: Record<string, string | undefined> = {}): Promise<Run> => {
    let stdout = '';
    let stderr = '';
    const code = await runTokenCommand(args, { env, stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
    return { code, stdout, stderr };
  };

  before(async function () {
    this.timeout(120_000);
    dataDir = mkdtempSync(path.join(tmpdir(), 'vap-cli-remote-'));
    await seedEmbeddedDatabase(dataDir);
    // Embedded PGlite: while this runs, nothing else may open the data directory.
    platform = spawnPlatform({ DATA_DIR: dataDir, ROLES: 'control', CONTROL_HOST: '127.0.0.1', CONTROL_PORT: '0', DATABASE_URL: '', CONFIG_FILE: '' });
    const listening = await waitForLine(platform, 'control API listening', 90_000);
    await waitForLine(platform, 'platform started', 90_000);
    server = `http://127.0.0.1:${String(listening['port'])}`;
    operator = readFileSync(path.join(dataDir, 'operator-token'), 'utf8').trim();
  });
  after(async () => {
    if (platform && platform.child.exitCode === null) {
      platform.child.kill('SIGTERM');
      await once(platform.child, 'exit');
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('applies examples/tenant through the platform while the local database is held by it', async () => {
    const local = await cliProcess(['apply', '-f', examples], { DATA_DIR: dataDir });
    assert.equal(local.code, 75, 'the local database is in use by the platform');
    assert.match(local.stderr, /in use by process \d+/);

    const remote = await cliProcess(['apply', '-f', examples], { DATA_DIR: dataDir, VAP_SERVER: server, VAP_TOKEN: operator });
    assert.equal(remote.code, 0, remote.stderr);
    assert.match(remote.stdout, /^created\s+Tenant\s+greenleaf\s+\(examples\/tenant\/00-tenant\.yaml document 1\)$/m);
    assert.match(remote.stdout, /25 created, 0 updated, 0 unchanged\n$/);

    const again = await apply(['-f', examples, '--server', server, '--token', operator, '--output', 'json']);
    assert.equal(again.code, 0, again.stderr);
    const report = JSON.parse(again.stdout) as { changed: boolean; summary: Record<string, number> };
    assert.equal(report.changed, false);
    assert.deepEqual(report.summary, { created: 0, updated: 0, unchanged: 25 });
  });

  it('--dry-run reports through the platform and writes nothing', async () => {
    const file = path.join(dataDir, 'dry.yaml');
    writeFileSync(file, 'apiVersion: vap/v1\nkind: Tenant\nspec: {clientId: dry-run-tenant, name: Dry}\n');
    const dry = await apply(['-f', file, '--dry-run'], { VAP_SERVER: server, VAP_TOKEN: operator });
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stdout, /1 created, 0 updated, 0 unchanged \(dry run: nothing was written\)/);
    const listed = await fetch(`${server}/v1/tenants/dry-run-tenant`, { headers: { Authorization: `Bearer ${operator}` } });
    assert.equal(listed.status, 404);
  });

  it('exits 65 naming the file, document and field the platform refused', async () => {
    const file = path.join(dataDir, 'bad.yaml');
    writeFileSync(file, 'apiVersion: vap/v1\nkind: Tenant\nspec: {clientId: ok-tenant, name: OK}\n---\napiVersion: vap/v1\nkind: SpeechProfile\ntenant: ok-tenant\nspec: {name: v, language: hi-IN, gender: robot, provider: espeak-ng, voiceName: hi}\n');
    const res = await apply(['-f', file, '--server', server, '--token', operator]);
    assert.equal(res.code, 65);
    assert.match(res.stderr, /documents\[1\]\.spec\.gender \(.*bad\.yaml document 2\): .*gender must be 'male' or 'female'/);
    assert.match(res.stderr, /nothing was written/);
  });

  it('creates, lists and revokes tokens through the platform; the token is printed once, on stdout', async () => {
    const created = await token(['create', '--tenant', 'acme', '--scope', 'management,campaign', '--name', 'ci', '--server', server, '--token', operator]);
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stderr, /created tenant acme/);
    const secret = created.stdout.trim();
    assert.match(secret, /^vap_/);
    assert.ok(!created.stderr.includes(secret));
    const id = /token ([0-9a-f-]{36})/.exec(created.stderr)?.[1];
    assert.ok(id);
    // The new management token works as the CLI's own credential for its tenant.
    const listed = await token(['list', '--tenant', 'acme'], { VAP_SERVER: server, VAP_TOKEN: secret });
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, new RegExp(`^${id}\\s+vap_\\S+\\.\\.\\.\\s+active\\s+management,campaign\\s+ci$`, 'm'));
    assert.ok(!listed.stdout.includes(secret));
    const second = await token(['create', '--tenant', 'acme', '--scope', 'sandbox', '--server', server, '--token', operator]);
    assert.equal(second.code, 0, second.stderr);
    assert.ok(!second.stderr.includes('created tenant'));
    const secondId = /token ([0-9a-f-]{36})/.exec(second.stderr)?.[1];
    assert.ok(secondId);
    assert.equal((await token(['revoke', '--tenant', 'acme', '--id', secondId, '--server', server, '--token', operator])).code, 0);
    assert.match((await token(['list', '--tenant', 'acme', '--server', server, '--token', operator])).stdout, new RegExp(`${secondId}\\s+\\S+\\s+revoked`));
    const again = await token(['revoke', '--tenant', 'acme', '--id', secondId, '--server', server, '--token', operator]);
    assert.equal(again.code, 64);
    assert.match(again.stderr, /no active token/);
    // A tenant token may not create tenants, nor apply a Tenant document.
    const other = await token(['create', '--tenant', 'globex', '--scope', 'sandbox', '--server', server, '--token', secret]);
    assert.equal(other.code, 77);
    assert.match(other.stderr, /permission denied by http:\/\/127\.0\.0\.1:\d+ \(403 permission_denied: only the operator credential may/);
    const tenantDoc = await apply(['-f', path.join(examples, '00-tenant.yaml'), '--server', server, '--token', secret]);
    assert.equal(tenantDoc.code, 77);
  });

  it('says "token refused" for a wrong token and names the URL it cannot reach', async () => {
    const refused = await apply(['-f', examples, '--server', server, '--token', 'vap_not_a_token']);
    assert.equal(refused.code, 77);
    assert.match(refused.stderr, new RegExp(`token refused by ${server.replace(/\./g, '\\.')} \\(401\\)`));
    const listRefused = await token(['list', '--tenant', 'acme'], { VAP_SERVER: server, VAP_TOKEN: 'wrong' });
    assert.equal(listRefused.code, 77);

    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as { port: number }).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const down = await token(['list', '--tenant', 'acme', '--server', `http://127.0.0.1:${port}`, '--token', operator]);
    assert.equal(down.code, 69);
    assert.match(down.stderr, new RegExp(`cannot reach the platform at http://127\\.0\\.0\\.1:${port}: connection refused`));
  });

  const usageMistakes: ReadonlyArray<[string, string[], RegExp]> = [
    ['--server without a token', ['--server', 'http://127.0.0.1:1'], /--server needs --token <token> or VAP_TOKEN/],
    ['--token without a server', ['--token', 'x'], /--token needs --server/],
    ['a server that is not an http URL', ['--server', 'ftp://127.0.0.1', '--token', 'x'], /expected an http\(s\) URL/],
    ['--config with --server', ['--server', 'http://127.0.0.1:1', '--token', 'x', '--config', 'platform.yaml'], /exclude each other/],
  ];
  for (const [what, extra, message] of usageMistakes) {
    it(`refuses ${what} with exit code 64`, async () => {
      const applied = await apply(['-f', examples, ...extra]);
      assert.equal(applied.code, 64, applied.stderr);
      assert.match(applied.stderr, message);
      const listed = await token(['list', '--tenant', 'acme', ...extra]);
      assert.equal(listed.code, 64, listed.stderr);
      assert.match(listed.stderr, message);
    });
  }

  it('refuses --no-create-tenant for a tenant that does not exist, creating nothing', async () => {
    const res = await token(['create', '--tenant', 'nobody', '--scope', 'sandbox', '--no-create-tenant', '--server', server, '--token', operator]);
    assert.equal(res.code, 64);
    assert.match(res.stderr, /tenant "nobody" does not exist/);
    assert.equal((await fetch(`${server}/v1/tenants/nobody`, { headers: { Authorization: `Bearer ${operator}` } })).status, 404);
  });
});
