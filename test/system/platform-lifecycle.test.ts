import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { once } from 'node:events';

const repoRoot = path.resolve(import.meta.dirname, '../..');

interface Started {
  readonly child: ReturnType<typeof spawn>;
  readonly lines: Array<Record<string, unknown>>;
  stderr: string;
}

async function startPlatform(env: Record<string, string>, args: string[] = []): Promise<Started> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/platform.ts', ...args], {
    cwd: repoRoot,
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const started: Started = { child, lines: [], stderr: '' };
  let buffer = '';
  child.stdout!.on('data', (d: Buffer) => {
    buffer += d.toString();
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      started.lines.push(JSON.parse(line) as Record<string, unknown>);
    }
  });
  child.stderr!.on('data', (d: Buffer) => (started.stderr += d.toString()));
  return started;
}

async function waitFor(started: Started, msg: string, timeoutMs = 30_000): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const hit = started.lines.find((l) => l['msg'] === msg);
    if (hit) return hit;
    if (started.child.exitCode !== null) throw new Error(`platform exited ${started.child.exitCode}: ${started.stderr}`);
    if (Date.now() > deadline) throw new Error(`no "${msg}" log line within ${timeoutMs} ms: ${started.stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('platform process', function () {
  this.timeout(90_000);

  it('starts on embedded PGlite with nothing configured, serves health and metrics, and stops on SIGTERM', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'vap-data-'));
    const env = { DATA_DIR: dataDir, CONTROL_HOST: '127.0.0.1', CONTROL_PORT: '0', SANDBOX_HOST: '127.0.0.1', SANDBOX_PORT: '0', ROLES: 'control,sandbox' };
    const started = await startPlatform(env);
    const control = await waitFor(started, 'control API listening');
    const sandbox = await waitFor(started, 'plant sandbox listening');
    await waitFor(started, 'platform started');

    const health = await fetch(`http://127.0.0.1:${String(control['port'])}/healthz`);
    assert.equal(health.status, 200);
    const ready = await fetch(`http://127.0.0.1:${String(control['port'])}/readyz`);
    assert.equal(ready.status, 200);
    assert.deepEqual(await ready.json(), { status: 'ready', checks: { database: 'ok' } });
    const metrics = await (await fetch(`http://127.0.0.1:${String(control['port'])}/metrics`)).text();
    assert.match(metrics, /vap_process_/);
    assert.equal((await fetch(`http://127.0.0.1:${String(sandbox['port'])}/healthz`)).status, 200);

    const token = readFileSync(path.join(dataDir, 'operator-token'), 'utf8').trim();
    const everything = started.lines.map((l) => JSON.stringify(l)).join('\n') + started.stderr;
    assert.ok(!everything.includes(token), 'the operator token must never be logged');

    started.child.kill('SIGTERM');
    const [code] = (await once(started.child, 'exit')) as [number | null];
    assert.equal(code, 0);
    assert.ok(started.lines.some((l) => l['msg'] === 'stopped'));
  });

  it('starts one role alone with --role', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'vap-data-'));
    const started = await startPlatform({ DATA_DIR: dataDir, SANDBOX_HOST: '127.0.0.1', SANDBOX_PORT: '0' }, ['--role', 'sandbox']);
    await waitFor(started, 'platform started');
    assert.ok(started.lines.some((l) => l['msg'] === 'plant sandbox listening'));
    assert.ok(!started.lines.some((l) => l['msg'] === 'control API listening'));
    started.child.kill('SIGINT');
    const [code] = (await once(started.child, 'exit')) as [number | null];
    assert.equal(code, 0);
  });

  it('refuses an invalid configuration with a clear message and exit code 78', async () => {
    const started = await startPlatform({ CONTROL_PORT: 'abc' });
    const [code] = (await once(started.child, 'exit')) as [number | null];
    assert.equal(code, 78);
    assert.match(started.stderr, /CONTROL_PORT: expected an integer/);
  });
});
