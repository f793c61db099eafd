import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { spawnPlatform as startPlatform, waitForLine as waitFor } from '../helpers/platform-process.js';
import { seedEmbeddedDatabase } from '../helpers/pglite-template.js';

describe('platform process', function () {
  this.timeout(300_000);

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
    assert.deepEqual(await ready.json(), { status: 'ready', checks: { startup: 'ok', database: 'ok' } });
    const metrics = await (await fetch(`http://127.0.0.1:${String(control['port'])}/metrics`)).text();
    // prom-client's defaults under their standard names, as stock dashboards expect them.
    assert.match(metrics, /^process_cpu_seconds_total /m);
    assert.match(metrics, /^nodejs_heap_size_total_bytes /m);
    assert.doesNotMatch(metrics, /vap_process_/);
    assert.equal((await fetch(`http://127.0.0.1:${String(sandbox['port'])}/healthz`)).status, 200);

    const token = readFileSync(path.join(dataDir, 'operator-token'), 'utf8').trim();
    const everything = started.lines.map((l) => JSON.stringify(l)).join('\n') + started.stderr;
    assert.ok(!everything.includes(token), 'the operator token must never be logged');

    started.child.kill('SIGTERM');
    const [code] = (await once(started.child, 'exit')) as [number | null];
    assert.equal(code, 0);
    assert.ok(started.lines.some((l) => l['msg'] === 'stopped'));
  });

  it('a SIGTERM while the roles are starting (docker stop right after docker run) stops it cleanly with exit 0, not 143', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'vap-data-'));
    await seedEmbeddedDatabase(dataDir);
    const env = {
      DATA_DIR: dataDir, CONTROL_HOST: '127.0.0.1', CONTROL_PORT: '0', SANDBOX_HOST: '127.0.0.1', SANDBOX_PORT: '0',
      SIP_HOST: '127.0.0.1', SIP_PORT: '0', SIP_TLS_PORT: '0', SIP_WS_PORT: '0', SIP_WSS_PORT: '0', SIP_PUBLIC_ADDRESS: '127.0.0.1',
    };
    const started = await startPlatform(env);
    // The database is ready before any role starts; the gateway still has its TLS certificate to make.
    await waitFor(started, 'database ready');
    started.child.kill('SIGTERM');
    const [code] = (await once(started.child, 'exit')) as [number | null];
    assert.equal(code, 0, started.stderr);
    const messages = started.lines.map((l) => l['msg']);
    assert.ok(messages.includes('stopped'), messages.join('\n'));
    // Either the signal came mid-start and was held until the roles ran, or the start had just ended.
    const held = messages.indexOf('signal while starting: stopping once started');
    if (held >= 0) assert.ok(held < messages.indexOf('platform started'));
  });

  it('starts one role alone with --role', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'vap-data-'));
    await seedEmbeddedDatabase(dataDir);
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
