// The static checks `npm test` runs before mocha (both type-checks, eslint, the layering rules),
// side by side: each is one process that mostly keeps one core busy, and one after another they
// took about 40 s of an otherwise idle 2-core machine. Each check's output is printed whole when
// it ends, so two never interleave; the first failure's exit code is this script's.
// Plain JavaScript: it only starts the commands package.json names.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => path.join(root, 'node_modules', '.bin', name);
const checks = [
  ['typecheck (platform and tests)', bin('tsc'), ['-p', 'tsconfig.json']],
  ['typecheck (dashboard)', bin('tsc'), ['-p', 'web/tsconfig.json']],
  ['lint', bin('eslint'), ['.']],
  ['layering', process.execPath, [path.join(root, 'scripts', 'layering.mjs')]],
];

function run([name, command, args]) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', (error) => resolve({ name, code: 1, output: `${output}${error.message}\n`, seconds: 0 }));
    child.on('exit', (code, signal) => resolve({ name, code: code ?? (signal ? 1 : 0), output, seconds: (Date.now() - started) / 1000 }));
  });
}

console.log(`checks: ${checks.map(([name]) => name).join(', ')} (side by side)`);
let failed = 0;
await Promise.all(
  checks.map(async (check) => {
    const result = await run(check);
    process.stdout.write(`${result.code === 0 ? 'passed' : 'FAILED'}: ${result.name} (${result.seconds.toFixed(1)} s)\n${result.output}`);
    if (result.code !== 0 && failed === 0) failed = result.code;
  }),
);
process.exit(failed);
