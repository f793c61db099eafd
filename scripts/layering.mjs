// The layering check `npm test` runs (scripts/checks.mjs): dependency-cruiser with the rules of
// .dependency-cruiser.cjs (layers, control-api's four floors, no module cycles), and one rule it
// cannot express: no circle between control-api's folders (control-api/<floor>/<folder>), where a
// file-level cycle-free graph can still make two folders use each other. One cruise, read as JSON.
// Plain JavaScript: it only starts the installed depcruise and reads its report.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const depcruise = path.join(root, 'node_modules', '.bin', 'depcruise');
/** The tree to check: the repository, or a test fixture shaped like it (test/system/layering.test.ts). */
const tree = process.argv[2] ? path.resolve(process.argv[2]) : root;
const folders = ['core', 'gateway', 'media', 'control-api', 'bin'].filter((folder) => existsSync(path.join(tree, folder)));
const args = ['--config', path.join(root, '.dependency-cruiser.cjs'), '--output-type', 'json', ...folders];
const { stdout } = await promisify(execFile)(depcruise, args, { cwd: tree, maxBuffer: 512 * 1024 * 1024 }).catch((error) => {
  // depcruise exits non-zero when rules are broken; its report is still on stdout.
  if (error.stdout) return error;
  throw error;
});
const report = JSON.parse(stdout);

const problems = report.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}${v.cycle ? ` (cycle ${v.cycle.map((c) => c.name ?? c).join(' -> ')})` : ''}`);

/** control-api/<floor>/<folder> of a production module, or undefined outside control-api. */
function folderOf(file) {
  const parts = file.split('/');
  if (parts[0] !== 'control-api' || parts.length < 3 || file.endsWith('.test.ts')) return undefined;
  return parts.length > 3 ? parts.slice(0, 3).join('/') : `${parts[0]}/${parts[1]}`;
}
const edges = new Map();
for (const module of report.modules) {
  const from = folderOf(module.source);
  if (!from) continue;
  for (const dependency of module.dependencies) {
    const to = folderOf(dependency.resolved);
    if (!to || to === from) continue;
    if (!edges.has(from)) edges.set(from, new Map());
    if (!edges.get(from).has(to)) edges.get(from).set(to, `${module.source} -> ${dependency.resolved}`);
  }
}
for (const circle of stronglyConnected(edges)) {
  const links = circle.flatMap((a) => circle.filter((b) => edges.get(a)?.has(b)).map((b) => `  ${edges.get(a).get(b)}`));
  problems.push(`folder circle: ${circle.join(', ')}\n${links.join('\n')}`);
}

console.log(`${report.summary.totalCruised} modules, ${report.summary.totalDependenciesCruised} dependencies cruised; control-api folders: ${new Set([...edges.keys(), ...[...edges.values()].flatMap((m) => [...m.keys()])]).size}`);
if (problems.length > 0) {
  console.log(problems.join('\n'));
  process.exit(1);
}
console.log('no layering violations, no folder circles');

/** Tarjan's strongly connected components of more than one folder. */
function stronglyConnected(graph) {
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const circles = [];
  let next = 0;
  const visit = (v) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) === index.get(v)) {
      const circle = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        circle.push(w);
      } while (w !== v);
      if (circle.length > 1) circles.push(circle.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return circles;
}
