import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execForm, parseDockerfile } from '../helpers/container-files.js';
import { freeTcpPort } from '../helpers/free-port.js';
import { freeUdpPort } from '../helpers/sipp.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The working tree as a commit (tracked and untracked files, .gitignore applied), without touching the index or HEAD. */
function snapshotCommit(): string {
  const index = path.join(mkdtempSync(path.join(tmpdir(), 'vap-index-')), 'index');
  const env = { ...process.env, GIT_INDEX_FILE: index };
  try {
    execFileSync('git', ['add', '-A'], { cwd: repoRoot, env, stdio: 'pipe' });
    const tree = execFileSync('git', ['write-tree'], { cwd: repoRoot, env, encoding: 'utf8' }).trim();
    const identity = { GIT_AUTHOR_NAME: 'test', GIT_AUTHOR_EMAIL: 'test@localhost', GIT_COMMITTER_NAME: 'test', GIT_COMMITTER_EMAIL: 'test@localhost' };
    return execFileSync('git', ['commit-tree', tree, '-m', 'working tree for the fresh-clone test'], { cwd: repoRoot, env: { ...env, ...identity }, encoding: 'utf8' }).trim();
  } finally {
    rmSync(path.dirname(index), { recursive: true, force: true });
  }
}

/** A command as a newcomer types it, in the clone; resolves when it exits (or fails after `timeoutMs`). */
async function run(command: string, args: readonly string[], cwd: string, env: Record<string, string> = {}, timeoutMs = 300_000): Promise<Run> {
  const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/** A long-running command (npm start) in its own process group, which is killed if it does not stop. */
class Background {
  stdout = '';
  stderr = '';
  readonly child: ChildProcess;
  constructor(command: string, args: readonly string[], cwd: string, env: Record<string, string>) {
    this.child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    this.child.stdout!.on('data', (d: Buffer) => (this.stdout += d.toString()));
    this.child.stderr!.on('data', (d: Buffer) => (this.stderr += d.toString()));
  }

  /** The JSON log lines printed so far (npm's own lines are not JSON). */
  lines(): Array<Record<string, unknown>> {
    return this.stdout.split('\n').flatMap((l) => {
      try {
        return [JSON.parse(l) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
  }

  async waitFor(msg: string, timeoutMs = 120_000): Promise<void> {
    for (const deadline = Date.now() + timeoutMs; ; ) {
      if (this.lines().some((l) => l['msg'] === msg)) return;
      if (this.child.exitCode !== null) throw new Error(`exited ${this.child.exitCode} before "${msg}":\n${this.stdout}\n${this.stderr}`);
      if (Date.now() > deadline) throw new Error(`no "${msg}" within ${timeoutMs} ms:\n${this.stdout}\n${this.stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /**
   * SIGTERM to the platform's own process (the pid its log lines carry), as `docker stop` sends it
   * to the image's node; then npm's exit code, which is the platform's.
   */
  async stop(): Promise<number | null> {
    if (this.child.exitCode !== null) return this.child.exitCode;
    const pid = this.lines().find((l) => typeof l['pid'] === 'number')?.['pid'] as number | undefined;
    process.kill(pid ?? -this.child.pid!, 'SIGTERM');
    const timer = setTimeout(() => process.kill(-this.child.pid!, 'SIGKILL'), 60_000);
    const [code] = (await once(this.child, 'exit')) as [number | null];
    clearTimeout(timer);
    return code;
  }
}

/** Ports of every listener on loopback, chosen free, so the clone's platform meets no other test. */
async function loopbackPorts(): Promise<Record<'CONTROL_PORT' | 'SANDBOX_PORT' | 'SIP_PORT', string> & Record<string, string>> {
  return {
    CONTROL_HOST: '127.0.0.1', CONTROL_PORT: String(await freeTcpPort()),
    SANDBOX_HOST: '127.0.0.1', SANDBOX_PORT: String(await freeTcpPort()),
    PROVIDERS_HOST: '127.0.0.1', PROVIDERS_PORT: String(await freeTcpPort()),
    SIP_HOST: '127.0.0.1', SIP_PORT: String(await freeUdpPort('127.0.0.1')), SIP_TLS_PORT: '0', SIP_WS_PORT: '0', SIP_WSS_PORT: '0',
    RTP_BIND_ADDRESS: '127.0.0.1', RTP_PORT_MIN: '48600', RTP_PORT_MAX: '48699',
    DRAIN_TIMEOUT_MS: '0', LOG_LEVEL: 'info',
  };
}

/**
 * What a newcomer meets: `git clone` into a private (0700) folder, `npm ci`, then the README's
 * command lines as written (ports moved off the defaults, so the suite can run beside it), and the
 * entry points of the Dockerfile. It runs the BUILT CLI and platform (dist/), never the sources.
 */
describe('a fresh clone, as a newcomer meets it (git clone + npm ci under a private folder)', function () {
  this.timeout(20 * 60_000);
  const home = mkdtempSync(path.join(tmpdir(), 'vap-newcomer-'));
  const clone = path.join(home, 'voice-agent-platform');
  // The settings a newcomer has: none of the suite's (a test run sets DATABASE_URL and the like).
  const clean = { DATABASE_URL: '', CONFIG_FILE: '', OPERATOR_TOKEN: '', SECRET_KEY: '', VAP_SERVER: '', VAP_TOKEN: '', DATA_DIR: '', ROLES: '' };

  before(async function () {
    this.timeout(15 * 60_000);
    chmodSync(home, 0o700);
    const commit = snapshotCommit();
    execFileSync('git', ['clone', '--quiet', '--no-checkout', repoRoot, clone], { stdio: 'pipe' });
    execFileSync('git', ['checkout', '--quiet', '--detach', commit], { cwd: clone, stdio: 'pipe' });
    assert.ok(!existsSync(path.join(clone, 'dist')) && !existsSync(path.join(clone, 'node_modules')));
    // --prefer-offline: the packages come from npm's cache when this machine has them (same lockfile).
    const install = await run('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund'], clone, clean, 12 * 60_000);
    assert.equal(install.code, 0, `npm ci failed:\n${install.stdout}\n${install.stderr}`);
    assert.doesNotMatch(install.stderr, /install scripts not yet covered|allowScripts/, 'npm ci warns about unreviewed install scripts');
    assert.ok(existsSync(path.join(clone, 'dist/bin/cli.js')), 'npm ci built dist/');
  });
  after(() => rmSync(home, { recursive: true, force: true }));

  it('npm run cli -- --version and --help run the built CLI', async () => {
    const version = (JSON.parse(readFileSync(path.join(clone, 'package.json'), 'utf8')) as { version: string }).version;
    const shown = await run('npm', ['run', '-s', 'cli', '--', '--version'], clone, clean);
    assert.equal(shown.code, 0, shown.stderr);
    assert.equal(shown.stdout, `${version}\n`);
    const help = await run('npm', ['run', '-s', 'cli', '--', '--help'], clone, clean);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /^usage: npm run cli -- <command>/);
  });

  it("docs/recipes.md's scripted simulation runs the built CLI: npm run cli -- simulate --script ...", async () => {
    const simulated = await run('npm', ['run', '-s', 'cli', '--', 'simulate', '--script', 'examples/recipes/loan-collection.scenarios.yaml'], clone, clean);
    assert.equal(simulated.code, 0, `${simulated.stdout}\n${simulated.stderr}`);
    assert.match(simulated.stdout, /PASS/);
    assert.doesNotMatch(simulated.stdout, /FAIL/);
  });

  it("README's Try a call: apply the example tenant, npm start, call +914440001001 with SIPp, then apply --server to the running platform", async () => {
    const apply = await run('npm', ['run', '-s', 'cli', '--', 'apply', '-f', 'examples/tenant'], clone, clean);
    assert.equal(apply.code, 0, `${apply.stdout}\n${apply.stderr}`);
    const env = { ...clean, ...(await loopbackPorts()), SIP_PUBLIC_ADDRESS: '127.0.0.1' };
    const platform = new Background('npm', ['start'], clone, env);
    try {
      await platform.waitFor('platform started');
      const sipPort = await freeUdpPort('127.0.0.20');
      const call = await run('sipp', [
        `127.0.0.1:${env.SIP_PORT}`, '-sf', 'uac-invite-expect-200-gateway-bye.xml', '-s', '+914440001001', '-i', '127.0.0.20',
        '-mi', '127.0.0.20', '-key', 'caller', '+919800000001', '-key', 'to_user', '+914440001001', '-m', '1', '-timeout', '60s',
        '-p', String(sipPort), '-mp', String(sipPort + 2), '-nostdin',
      ], path.join(clone, 'sipp-scenarios'), {}, 120_000);
      assert.equal(call.code, 0, `SIPp: ${call.stdout.slice(-2000)}\n${call.stderr}`);

      const token = readFileSync(path.join(clone, 'data/operator-token'), 'utf8').trim();
      const server = `http://127.0.0.1:${env.CONTROL_PORT}`;
      const remote = await run('npm', ['run', '-s', 'cli', '--', 'apply', '-f', 'examples/tenant', '--server', server], clone, { ...clean, VAP_TOKEN: token });
      assert.equal(remote.code, 0, `${remote.stdout}\n${remote.stderr}`);
      const calls = (await (await fetch(`${server}/v1/tenants/greenleaf/calls`, { headers: { authorization: `Bearer ${token}` } })).json()) as { items: Array<{ phoneNumber: string }> };
      assert.ok(calls.items.some((c) => c.phoneNumber.endsWith('914440001001')), JSON.stringify(calls));
    } finally {
      assert.equal(await platform.stop(), 0, platform.stderr);
    }
  });

  it("README's plant sandbox: token create while stopped, npm start -- --role sandbox, then the three endpoints", async () => {
    const token = await run('npm', ['run', '-s', 'cli', '--', 'token', 'create', '--tenant', 'acme', '--scope', 'sandbox'], clone, clean);
    assert.equal(token.code, 0, token.stderr);
    const bearer = token.stdout.trim();
    const env = { ...clean, ...(await loopbackPorts()) };
    const sandbox = new Background('npm', ['start', '--', '--role', 'sandbox'], clone, env);
    try {
      await sandbox.waitFor('platform started');
      const base = `http://127.0.0.1:${env.SANDBOX_PORT}`;
      const headers = { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' };
      const created = await fetch(`${base}/plants`, { method: 'POST', headers, body: JSON.stringify({ id: 1, name: 'Monstera', tag: 'indoor' }) });
      assert.equal(created.status, 200, await created.text());
      const listed = (await (await fetch(`${base}/plants?limit=10`, { headers })).json()) as Array<{ name: string }>;
      assert.deepEqual(listed.map((p) => p.name), ['Monstera']);
      assert.equal((await fetch(`${base}/plants/1`, { method: 'DELETE', headers })).status, 204);
    } finally {
      assert.equal(await sandbox.stop(), 0, sandbox.stderr);
    }
  });

  it("the Dockerfile's CMD starts the built platform and its HEALTHCHECK passes", async () => {
    const final = parseDockerfile(readFileSync(path.join(clone, 'Dockerfile'), 'utf8')).at(-1)!;
    const cmd = execForm(final.steps.filter((s) => s.keyword === 'CMD').at(-1)!)!;
    const probe = execForm(final.steps.find((s) => s.keyword === 'HEALTHCHECK')!)!;
    const dataDir = mkdtempSync(path.join(tmpdir(), 'vap-image-data-'));
    const env = { ...clean, ...(await loopbackPorts()), DATA_DIR: dataDir, NODE_ENV: 'production' };
    const platform = new Background(cmd[0]!, cmd.slice(1), clone, env);
    try {
      await platform.waitFor('platform started');
      const health = await run(probe[0]!, probe.slice(1), clone, { CONTROL_PORT: env.CONTROL_PORT }, 30_000);
      assert.equal(health.code, 0, health.stderr);
    } finally {
      assert.equal(await platform.stop(), 0, platform.stderr);
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
