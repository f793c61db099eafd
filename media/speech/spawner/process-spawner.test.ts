import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ProcessSpawner, SpawnError, type SpawnedRun } from './process-spawner.js';

async function collect(run: SpawnedRun): Promise<{ out: string; code: number | null; stderr: string }> {
  const parts: Buffer[] = [];
  for await (const chunk of run.stdout) parts.push(chunk);
  const { code, stderr } = await run.ended;
  return { out: Buffer.concat(parts).toString(), code, stderr };
}

describe('process spawner: programs started by a small helper, not by forking the platform', function () {
  this.timeout(20_000);
  const spawner = new ProcessSpawner();
  after(() => spawner.stop());

  it('passes stdin, returns stdout byte for byte (binary and large), the exit code and stderr', async () => {
    assert.deepEqual(await collect(await spawner.run(['/bin/cat'], 'line one\nline two', new AbortController().signal)), { out: 'line one\nline two', code: 0, stderr: '' });
    const big = await collect(await spawner.run(['/usr/bin/head', '-c', '300000', '/dev/zero'], '', new AbortController().signal));
    assert.equal(big.out.length, 300_000);
    const failed = await collect(await spawner.run(['/bin/sh', '-c', 'echo oops >&2; exit 3'], '', new AbortController().signal));
    assert.deepEqual(failed, { out: '', code: 3, stderr: 'oops\n' });
  });

  it('runs several at once, each with its own output', async () => {
    const runs = await Promise.all(['a', 'b', 'c', 'd'].map((t) => spawner.run(['/bin/sh', '-c', `sleep 0.2; cat; echo -n ${t}`], `${t}${t}`, new AbortController().signal)));
    assert.deepEqual((await Promise.all(runs.map(collect))).map((r) => r.out), ['aaa', 'bbb', 'ccc', 'ddd']);
  });

  it('kills a program when its signal aborts (code null), and names a program that cannot start', async () => {
    const stop = new AbortController();
    const run = await spawner.run(['/bin/sleep', '30'], '', stop.signal);
    const started = Date.now();
    setTimeout(() => stop.abort(), 100);
    const { code } = await collect(run);
    assert.equal(code, null);
    assert.ok(Date.now() - started < 5_000);
    const missing = await spawner.run(['/nonexistent/espeak-ng'], 'x', new AbortController().signal);
    await assert.rejects(collect(missing), (e: unknown) => e instanceof SpawnError && /No such file/.test(e.message));
  });

  it('starts the helper again after it died; without python3 it spawns directly', async () => {
    spawner.stop();
    assert.equal((await collect(await spawner.run(['/bin/echo', 'again'], '', new AbortController().signal))).out, 'again\n');
    const direct = new ProcessSpawner({ python: '/nonexistent/python3' });
    assert.equal((await collect(await direct.run(['/bin/echo', 'direct'], '', new AbortController().signal))).out, 'direct\n');
  });

  it('a helper that writes something else than its protocol is stopped, and its runs fail (no crash)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'vap-spawner-'));
    const script = path.join(dir, 'noisy.py');
    writeFileSync(script, 'import sys, time\nsys.stdout.write(\'{"ready": true}\\n\')\nsys.stdout.flush()\nsys.stdin.readline()\nsys.stdout.write("Traceback: not the protocol\\n")\nsys.stdout.flush()\ntime.sleep(30)\n');
    const noisy = new ProcessSpawner({ script });
    try {
      const run = await noisy.run(['/bin/echo', 'x'], '', new AbortController().signal);
      await assert.rejects(collect(run), (e: unknown) => e instanceof SpawnError && /the spawner stopped/.test(e.message));
    } finally {
      noisy.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
