// Runs the whole mocha suite in parallel (`mocha --parallel`): most test files wait on real peers
// (SIPp, PostgreSQL, real-time RTP) far more than they compute, so several files share the two
// cores well. Files start longest first (test/setup/file-durations.json, measured), so the
// longest one is not left running alone at the end; files it does not list are short and follow.
// Plain JavaScript: it only lists files and starts mocha. Extra arguments go to mocha.
//   TEST_JOBS  files at once (default 6: 4 left the cores a third idle, 12m38s idle; 6 took 11m04s)
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** Where test files live: cross-part tests in test/, unit tests beside their sources. */
const folders = ['test', 'core', 'gateway', 'media', 'control-api', 'bin'];

function testFiles(dir) {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : testFiles(rel);
    return entry.name.endsWith('.test.ts') ? [rel] : [];
  });
}

const durations = JSON.parse(readFileSync(path.join(root, 'test/setup/file-durations.json'), 'utf8'));
const files = folders
  .flatMap(testFiles)
  .sort()
  .sort((a, b) => (durations[b] ?? 0) - (durations[a] ?? 0));
const jobs = process.env.TEST_JOBS ?? '6';
const mocha = path.join(root, 'node_modules/mocha/bin/mocha.js');
const child = spawn(process.execPath, [mocha, '--parallel', '--jobs', jobs, ...process.argv.slice(2), ...files], { cwd: root, stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
