// Emits the production JavaScript into dist/ (esbuild, file by file, as tsx runs the sources in
// the tests; the types are checked by `npm test`'s tsc, not here: tsc's emit took 26 s of CPU per
// build and the suite builds four times), which `npm start` runs with plain node, then builds the dashboard (web/, Vite) into dist/dashboard, which the control
// role serves at `/`. `--if-stale` builds only when dist/ is missing or older than its sources: npm
// runs it on install (`prepare`) and before `npm start` / `npm run cli`, so a fresh clone's
// `npm ci && npm start` and a start after editing a file both run current code.
// Plain JavaScript on purpose: it must run before anything is compiled.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
const stampFile = path.join(dist, '.build-stamp.json');
/** The folders tsconfig.build.json compiles, and the files whose change changes the output. */
const sourceFolders = ['core', 'gateway', 'media', 'control-api', 'bin'];
const configFiles = ['scripts/build-dist.mjs', 'tsconfig.json', 'tsconfig.build.json', 'web/index.html', 'web/vite.config.ts', 'web/tsconfig.json'];
/** The dashboard's sources (web/src): any change rebuilds, like a production source. */
const dashboardFolder = path.join('web', 'src');

/** Files of the production folders that `keep` selects, relative to the root. */
function productionFiles(keep) {
  const found = [];
  const walk = (dir) => {
    for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(rel);
      else if (keep(entry.name)) found.push(rel);
    }
  };
  for (const folder of sourceFolders) if (existsSync(path.join(root, folder))) walk(folder);
  return found.sort();
}

/** Production TypeScript sources, relative to the root (tests and declarations are not emitted). */
function sources() {
  return productionFiles((name) => name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts'));
}

/**
 * Files production runs as they are, beside the compiled code: the offline recogniser's Python
 * worker (media/speech/recogniser/worker.py) and the spawner that starts espeak-ng
 * (media/speech/spawner/spawner.py), which the code finds next to its own modules.
 */
function assets() {
  return productionFiles((name) => name.endsWith('.py'));
}

/** Every file of the dashboard's sources (web/src): Vite bundles them into dist/dashboard. */
function dashboardSources() {
  const found = [];
  const walk = (dir) => {
    for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(rel);
      else found.push(rel);
    }
  };
  if (existsSync(path.join(root, dashboardFolder))) walk(dashboardFolder);
  return found.sort();
}

/** Why dist/ must be rebuilt, or undefined when it is current. */
function staleness(files, dashboard, copied) {
  if (!existsSync(stampFile)) return 'dist/ has not been built';
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(stampFile, 'utf8'));
  } catch {
    return 'dist/ build stamp is unreadable';
  }
  // A renamed or deleted source keeps no output of its own: dist/ would still hold the old one
  // (a removed migration would still run), so any change to the file list rebuilds from empty.
  if (JSON.stringify(stamp.sources) !== JSON.stringify(files)) return 'source files were added, removed or renamed';
  if (JSON.stringify(stamp.dashboard) !== JSON.stringify(dashboard)) return 'dashboard files were added, removed or renamed';
  if (JSON.stringify(stamp.assets ?? []) !== JSON.stringify(copied)) return 'runtime files (assets) were added, removed or renamed';
  // Compared with when the last build started, so a file saved during a build counts as changed.
  const builtAt = typeof stamp.startedAt === 'number' ? stamp.startedAt : statSync(stampFile).mtimeMs;
  const changed = [...files, ...dashboard, ...copied, ...configFiles].find((f) => existsSync(path.join(root, f)) && statSync(path.join(root, f)).mtimeMs > builtAt);
  return changed ? `${changed} changed since the last build` : undefined;
}

function resolveTool(specifier) {
  try {
    return createRequire(path.join(root, 'package.json')).resolve(specifier);
  } catch {
    return undefined;
  }
}

const ifStale = process.argv.includes('--if-stale');
const files = sources();
const dashboard = dashboardSources();
const copied = assets();
if (ifStale && files.length === 0 && existsSync(path.join(dist, 'bin', 'platform.js'))) {
  process.exit(0); // dist/ without sources: a deployed build (the image copies dist/ only)
}
const reason = staleness(files, dashboard, copied);
if (ifStale && !reason) process.exit(0);

const esbuild = resolveTool('esbuild');
// Vite's exports map hides its bin/ folder from require.resolve; its package.json is exported.
const vitePackage = resolveTool('vite/package.json');
const vite = vitePackage ? path.join(path.dirname(vitePackage), 'bin', 'vite.js') : undefined;
if (!esbuild || !vite) {
  process.stderr.write(
    `${reason ?? 'a build was asked for'}, and ${esbuild ? 'Vite' : 'esbuild'} (a devDependency) is not installed here: ` +
      'install with dev dependencies (`npm ci`) and run `npm run build`, or deploy a built dist/ (see the Dockerfile).\n',
  );
  process.exit(1);
}
process.stderr.write(`building dist/ (${reason ?? 'asked for'}) ...\n`);
const started = Date.now();
rmSync(dist, { recursive: true, force: true });
// One module per source, in the sources' layout (no bundle): the code finds its Python workers and
// migrations beside its own modules. Messages go to stderr; stdout is kept for the command that
// follows (`npm run -s cli` prints a token).
try {
  const { build } = await import(pathToFileURL(esbuild).href);
  await build({
    entryPoints: files.map((f) => path.join(root, f)),
    outdir: dist,
    outbase: root,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: true,
    tsconfig: path.join(root, 'tsconfig.build.json'),
    logLevel: 'warning',
  });
} catch (error) {
  rmSync(dist, { recursive: true, force: true });
  process.stderr.write(`dist/ not built: esbuild failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
// The dashboard: a static single-page app (web/), bundled by Vite into dist/dashboard.
const dashboardBuild = spawnSync(process.execPath, [vite, 'build', '--config', path.join(root, 'web', 'vite.config.ts')], { cwd: root, stdio: ['ignore', 2, 2] });
if (dashboardBuild.status !== 0) {
  rmSync(dist, { recursive: true, force: true });
  process.stderr.write('dist/ not built: the dashboard build (vite) failed (above).\n');
  process.exit(dashboardBuild.status ?? 1);
}
for (const file of copied) {
  mkdirSync(path.dirname(path.join(dist, file)), { recursive: true });
  copyFileSync(path.join(root, file), path.join(dist, file));
}
writeFileSync(stampFile, `${JSON.stringify({ startedAt: started, sources: files, dashboard, assets: copied }, null, 1)}\n`);
process.stderr.write(`dist/ built in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
