import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { AppError } from '../../../core/errors.js';

export interface DirectoryLock {
  release(): void;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * An exclusive, pid-stamped lock file. PGlite has no lock of its own and two processes writing
 * one data directory corrupt it, so every opener (platform, CLI) takes this first. A lock left by
 * a process that no longer exists is taken over.
 */
export function acquireDirectoryLock(lockFile: string, what: string): DirectoryLock {
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      writeFileSync(lockFile, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
      let released = false;
      return {
        release() {
          if (released) return;
          released = true;
          rmSync(lockFile, { force: true });
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number.parseInt(readFileSync(lockFile, 'utf8').trim(), 10);
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder)) {
        throw new AppError(
          'unavailable',
          `${what} is in use by process ${holder} (a running platform?): PGlite allows one process per data directory; ` +
            'stop that process first, or use PostgreSQL via DATABASE_URL, where several processes can share the database',
        );
      }
      rmSync(lockFile, { force: true });
    }
  }
  throw new AppError('unavailable', `could not take the lock ${lockFile}`);
}
