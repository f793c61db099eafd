// Runs the whole mocha suite in parallel (`mocha --parallel`): most test files wait on real peers
// (SIPp, PostgreSQL, real-time RTP) far more than they compute, so several files share the two
// cores well. Files start longest first (test/setup/file-durations.json, measured), so the
// longest one is not left running alone at the end; files it does not list are short and follow.
// Plain JavaScript: it only lists files and starts mocha. Extra arguments go to mocha.
//   TEST_JOBS  files at once. Default: 4 on an idle machine, fewer when other work already keeps
//              the cores busy (down to 2 with every core taken): the real-time tests (RTP, SIP
//              timers) and the platform start-ups need the CPU in time. 6 was the default while
//              the machines were quicker (11m04s against 12m38s with 4); on a machine half as
//              quick, a fresh clone with 6 took 21 min with 9 start-ups and PGlite opens timed
//              out (load average 12), and CI failed 4 at 18 min; the same suite with 4 took 18 min
//              with none failing (load 8).
//   TEST_FILE_STATS  a file to collect each test file's wall time and CPU in; the 20 costliest
//              are printed at the end (test/setup/mocha-hooks.ts).
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
/** Share of the CPU (0..1) other work used over `ms`, from /proc/stat (0 where there is none). */
async function busyShare(ms) {
  const sample = () => {
    try {
      const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
      const n = fields.map(Number);
      return { idle: n[3] + (n[4] ?? 0), total: n.reduce((a, b) => a + b, 0) };
    } catch {
      return undefined;
    }
  };
  const before = sample();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const after = sample();
  if (!before || !after || after.total === before.total) return 0;
  return 1 - (after.idle - before.idle) / (after.total - before.total);
}
const jobs = process.env.TEST_JOBS ?? String(Math.max(2, Math.round(4 - 2 * (await busyShare(1000)))));
console.log(`test files at once: ${jobs}`);
const mocha = path.join(root, 'node_modules/mocha/bin/mocha.js');
const child = spawn(process.execPath, [mocha, '--parallel', '--jobs', jobs, ...process.argv.slice(2), ...files], { cwd: root, stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => {
  if (process.env.TEST_FILE_STATS) printFileStats(process.env.TEST_FILE_STATS);
  process.exit(code ?? (signal ? 1 : 0));
});

/** The files that took the most CPU (test/setup/mocha-hooks.ts writes a line per file). */
function printFileStats(file) {
  let rows;
  try {
    rows = readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
  } catch {
    return;
  }
  const cpu = (r) => r.ownCpuMs + r.childCpuMs;
  rows.sort((a, b) => cpu(b) - cpu(a));
  const total = rows.reduce((n, r) => n + cpu(r), 0);
  console.log(`\nCPU by test file (own + the processes it waited for), ${rows.length} files, ${(total / 1000).toFixed(0)} s in all:`);
  for (const r of rows.slice(0, 20)) console.log(`  ${(cpu(r) / 1000).toFixed(1).padStart(6)} s CPU (${(r.childCpuMs / 1000).toFixed(1)} s in children), ${(r.wallMs / 1000).toFixed(1).padStart(6)} s wall  ${r.file}`);
}
