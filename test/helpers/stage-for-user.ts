import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const repoRoot = path.resolve(import.meta.dirname, '../..');

/** What the built platform needs at run time, plus the module hooks that refuse devDependencies. */
const builtParts = ['package.json', 'package-lock.json', 'dist', 'node_modules', path.join('test', 'helpers', 'production-only')];

export interface StagedCopy {
  readonly root: string;
  remove(): void;
}

/**
 * A copy of the built artefact that another user can read. A test that drops to an unprivileged
 * uid cannot run from the checkout when it lies under a private (0700) directory, as a clone in
 * root's home or in `mktemp -d` does. Hard links make the copy cheap; across file systems it copies.
 */
export function stageForUser(): StagedCopy {
  const root = mkdtempSync(path.join(tmpdir(), 'vap-staged-'));
  chmodSync(root, 0o755);
  for (const part of builtParts) {
    const target = path.join(root, part);
    mkdirSync(path.dirname(target), { recursive: true, mode: 0o755 });
    const from = path.join(repoRoot, part);
    try {
      execFileSync('cp', ['-al', from, target], { stdio: 'pipe' });
    } catch {
      rmSync(target, { recursive: true, force: true });
      execFileSync('cp', ['-a', from, target], { stdio: 'pipe' });
    }
  }
  chmodSync(path.join(root, 'test'), 0o755);
  chmodSync(path.join(root, 'test', 'helpers'), 0o755);
  return { root, remove: () => rmSync(root, { recursive: true, force: true }) };
}
