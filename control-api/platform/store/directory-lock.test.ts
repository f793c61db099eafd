import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isAppError } from '../../../core/errors.js';
import { acquireDirectoryLock } from './directory-lock.js';
import { openStore } from './database.js';

describe('embedded database directory lock', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'vap-lock-'));

  it('refuses a second opener of the same PGlite directory while the first holds it, then frees it on close', async function () {
    this.timeout(60_000);
    const pgliteDir = path.join(dir, 'pglite');
    const first = await openStore({ pgliteDir });
    // The lock is per process: simulate another live process holding it by stamping a live pid.
    const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)']);
    try {
      await first.close();
      writeFileSync(`${pgliteDir}.lock`, `${holder.pid}\n`);
      await assert.rejects(openStore({ pgliteDir }), (error: unknown) => {
        assert.ok(isAppError(error));
        assert.equal(error.code, 'unavailable');
        assert.match(error.message, new RegExp(`in use by process ${holder.pid} \\(a running platform\\?\\)`));
        return true;
      });
    } finally {
      holder.kill();
    }
  });

  it('takes over a lock left by a process that no longer exists, and removes it on release', () => {
    const lockFile = path.join(dir, 'stale.lock');
    writeFileSync(lockFile, '999999999\n');
    const lock = acquireDirectoryLock(lockFile, 'test dir');
    assert.ok(existsSync(lockFile));
    lock.release();
    assert.equal(existsSync(lockFile), false);
  });
});
