import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The platform's version from its package.json. The sources run from the repository (`core/`) and
 * the build from `dist/core/`, and the build does not copy package.json, so the file is found by
 * walking up from this module to the first package.json that names this package.
 */
export function packageVersion(from: string = path.dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === packageName && typeof pkg.version === 'string') return pkg.version;
    }
    if (path.dirname(dir) === dir) throw new Error(`no package.json of ${packageName} above ${from}`);
  }
}

const packageName = 'voice-agent-platform';
