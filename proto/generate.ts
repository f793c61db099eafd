import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * Generates the TypeScript of `proto/*.proto` with protoc (Debian `protobuf-compiler`, well-known
 * types from `libprotobuf-dev`) and the protobuf-ts plugin (`@protobuf-ts/plugin`), and checks
 * that the committed output is current:
 *
 *   npm run proto            regenerate the committed files
 *   npm run proto -- --check exit 1 naming every file that differs (test/campaigns/proto-generated.test.ts)
 *
 * Two outputs: the server's message types and service descriptor (no client, no server stub: the
 * Koa service in control-api/features/campaigns answers the route itself), and a generated Twirp client
 * that the tests drive over @protobuf-ts/twirp-transport, as a customer's generated client would.
 */
const repoRoot = path.resolve(import.meta.dirname, '..');

export interface ProtoTarget {
  /** Output directory, relative to the repository. */
  readonly out: string;
  /** protobuf-ts plugin parameters. */
  readonly options: readonly string[];
}

export const protoTargets: readonly ProtoTarget[] = [
  { out: 'control-api/features/campaigns/proto', options: ['client_none', 'server_none', 'optimize_code_size', 'eslint_disable', 'ts_nocheck'] },
  { out: 'test/campaigns/generated', options: ['optimize_code_size', 'eslint_disable', 'ts_nocheck'] },
];

/**
 * Debian's compiler by absolute path: inside `npm run`, node_modules/.bin is first on the PATH and
 * its `protoc` (@protobuf-ts/protoc) downloads a compiler from the internet.
 */
const systemProtoc = '/usr/bin/protoc';

const wellKnownTypes = ['/usr/include', '/usr/local/include'].find((dir) => existsSync(path.join(dir, 'google/protobuf/struct.proto')));

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? filesUnder(full).map((f) => path.join(name, f)) : [name];
  });
}

/**
 * ESM under `moduleResolution: NodeNext` needs the extension on relative imports, which the
 * plugin leaves out (it has no option for it): `from "./google/protobuf/struct"` gets `.js`.
 */
export function withJsExtensions(source: string): string {
  return source.replace(/(from ")(\.{1,2}\/[^"]+?)(?<!\.js)(";)/g, '$1$2.js$3');
}

/** Runs protoc for one target into a fresh directory and returns it: file path -> content. */
export function generate(target: ProtoTarget): Map<string, string> {
  if (!wellKnownTypes) throw new Error('google/protobuf/struct.proto not found: apt-get install protobuf-compiler libprotobuf-dev');
  if (!existsSync(systemProtoc)) throw new Error(`${systemProtoc} not found: apt-get install protobuf-compiler`);
  const protoDir = path.join(repoRoot, 'proto');
  const protos = readdirSync(protoDir).filter((f) => f.endsWith('.proto')).sort();
  const scratch = mkdtempSync(path.join(tmpdir(), 'vap-proto-'));
  try {
    execFileSync(systemProtoc, [
      `--plugin=protoc-gen-ts=${path.join(repoRoot, 'node_modules/.bin/protoc-gen-ts')}`,
      `--ts_out=${scratch}`,
      `--ts_opt=${target.options.join(',')}`,
      `-I${protoDir}`,
      `-I${wellKnownTypes}`,
      ...protos,
    ], { cwd: protoDir, stdio: ['ignore', 'pipe', 'pipe'] });
    const files = new Map<string, string>();
    for (const file of filesUnder(scratch).sort()) files.set(file, withJsExtensions(readFileSync(path.join(scratch, file), 'utf8')));
    return files;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** Paths (relative to the repository) whose committed content differs from a fresh generation. */
export function staleFiles(target: ProtoTarget): string[] {
  const fresh = generate(target);
  const outDir = path.join(repoRoot, target.out);
  const committed = new Set(filesUnder(outDir));
  const stale: string[] = [];
  for (const [file, content] of fresh) {
    const full = path.join(outDir, file);
    if (!committed.has(file) || readFileSync(full, 'utf8') !== content) stale.push(path.join(target.out, file));
    committed.delete(file);
  }
  for (const leftover of committed) stale.push(path.join(target.out, leftover));
  return stale.sort();
}

export function writeTarget(target: ProtoTarget): void {
  const outDir = path.join(repoRoot, target.out);
  rmSync(outDir, { recursive: true, force: true });
  for (const [file, content] of generate(target)) {
    mkdirSync(path.dirname(path.join(outDir, file)), { recursive: true });
    writeFileSync(path.join(outDir, file), content);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  if (process.argv.includes('--check')) {
    const stale = protoTargets.flatMap(staleFiles);
    if (stale.length > 0) {
      process.stderr.write(`generated protobuf code is not current (run npm run proto):\n${stale.map((f) => `  ${f}\n`).join('')}`);
      process.exitCode = 1;
    }
  } else {
    for (const target of protoTargets) writeTarget(target);
  }
}
