import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { execForm, parseDockerfile } from '../helpers/container-files.js';
import { freeTcpPort } from '../helpers/free-port.js';
import { spawnPlatform, waitForLine, type PlatformProcess } from '../helpers/platform-process.js';
import { stageForUser, type StagedCopy } from '../helpers/stage-for-user.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const isRoot = process.getuid?.() === 0;
/** The image runs as `node`; here, as root, the platform runs as `nobody`, else as ourselves. */
const runAs = isRoot ? { uid: 65534, gid: 65534 } : {};
const runUid = runAs.uid ?? process.getuid?.() ?? -1;


/** A fresh data directory the platform's user owns, as the image's /data is. */
function dataDirForRunUser(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'vap-built-'));
  chmodSync(dir, 0o755);
  if (isRoot) chownSync(dir, runUid, runUid);
  return dir;
}

function loopbackEnv(dataDir: string, controlPort: number): Record<string, string> {
  return {
    DATA_DIR: dataDir, DATABASE_URL: '', CONFIG_FILE: '', OPERATOR_TOKEN: '', SECRET_KEY: '',
    CONTROL_HOST: '127.0.0.1', CONTROL_PORT: String(controlPort), SANDBOX_HOST: '127.0.0.1', SANDBOX_PORT: '0',
    SIP_HOST: '127.0.0.1', SIP_PORT: '0', SIP_TLS_PORT: '0', SIP_WS_PORT: '0', SIP_WSS_PORT: '0', SIP_PUBLIC_ADDRESS: '127.0.0.1',
    RTP_BIND_ADDRESS: '127.0.0.1', RTP_PORT_MIN: '46400', RTP_PORT_MAX: '46499',
  };
}

/** Our environment less c8's coverage folder, which the unprivileged user cannot write. */
function withoutCoverage(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  if (isRoot) delete env['NODE_V8_COVERAGE'];
  return env;
}

async function stop(started: PlatformProcess): Promise<number | null> {
  if (started.child.exitCode !== null) return started.child.exitCode;
  started.child.kill('SIGTERM');
  const [code] = (await once(started.child, 'exit')) as [number | null];
  return code;
}

/** `npm start` and the image run dist/ with plain node; the rest of the suite runs the sources under tsx. */
describe('the built artefact (dist/) that npm start and the image run', function () {
  this.timeout(180_000);
  /** Where the unprivileged user runs it from: a readable copy when we are root (the checkout may sit under a 0700 folder). */
  let staged: StagedCopy | undefined;
  let runRoot = repoRoot;

  before(() => {
    // `npm test` has just built it (npm run build); alone, this file builds it when stale.
    const build = spawnSync(process.execPath, ['scripts/build-dist.mjs', '--if-stale'], { cwd: repoRoot, encoding: 'utf8', timeout: 170_000 });
    assert.equal(build.status, 0, build.stderr);
    if (isRoot) {
      staged = stageForUser();
      runRoot = staged.root;
    }
  });
  after(() => staged?.remove());

  it('is compiled JavaScript for every production source; npm start runs it with plain node and tsx is a devDependency only', () => {
    const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    assert.equal(pkg.scripts['start'], 'node --enable-source-maps dist/bin/platform.js');
    assert.equal(pkg.scripts['prestart'], 'node scripts/build-dist.mjs --if-stale');
    assert.equal(pkg.scripts['prepare'], 'node scripts/build-dist.mjs --if-stale');
    assert.equal(pkg.dependencies['tsx'], undefined);
    assert.ok(pkg.devDependencies['tsx']);

    const { sources } = JSON.parse(readFileSync(path.join(repoRoot, 'dist/.build-stamp.json'), 'utf8')) as { sources: string[] };
    assert.ok(sources.includes(path.join('bin', 'platform.ts')) && sources.length > 300, `${sources.length} sources`);
    const missing = sources.filter((s) => !existsSync(path.join(repoRoot, 'dist', s.replace(/\.ts$/, '.js'))));
    assert.deepEqual(missing, []);
    const migrations = readdirSync(path.join(repoRoot, 'dist/control-api/platform/store/migrations')).filter((f) => f.endsWith('.js'));
    assert.equal(migrations.length, readdirSync(path.join(repoRoot, 'control-api/platform/store/migrations')).filter((f) => f.endsWith('.ts')).length);
    // Files production runs as they are: the offline recogniser's Python worker, beside its module.
    assert.ok(existsSync(path.join(repoRoot, 'dist/media/speech/recogniser/worker.py')), 'dist/ holds the recogniser worker');
    const emittedTs = spawnSync('find', ['dist', '-name', '*.ts'], { cwd: repoRoot, encoding: 'utf8' }).stdout.trim();
    assert.equal(emittedTs, '');

    // Current: the check before `npm start` builds nothing and says nothing.
    const again = spawnSync(process.execPath, ['scripts/build-dist.mjs', '--if-stale'], { cwd: repoRoot, encoding: 'utf8' });
    assert.equal(again.status, 0);
    assert.equal(again.stderr + again.stdout, '');
  });

  it(`starts from dist/ as an unprivileged user (uid ${runUid}) on a fresh data directory, needing no devDependency, and passes the image's HEALTHCHECK`, async () => {
    const dataDir = dataDirForRunUser();
    const controlPort = await freeTcpPort();
    const started = spawnPlatform(loopbackEnv(dataDir, controlPort), [], { built: true, root: runRoot, ...runAs });
    try {
      await waitForLine(started, 'platform started', 90_000);
      assert.ok(started.lines.some((l) => String(l['msg']).startsWith('SIP gateway listening')));
      assert.ok(!started.lines.some((l) => String(l['msg']).startsWith('SIP over TLS disabled')), started.stderr);

      // The Dockerfile's own HEALTHCHECK command, run as the platform's user.
      const final = parseDockerfile(readFileSync(path.join(repoRoot, 'Dockerfile'), 'utf8')).at(-1)!;
      const probe = execForm(final.steps.find((s) => s.keyword === 'HEALTHCHECK')!)!;
      assert.equal(probe[0], 'node');
      const healthy = await new Promise<number>((resolve) => {
        execFile(process.execPath, probe.slice(1), { env: { ...withoutCoverage(), CONTROL_PORT: String(controlPort) }, ...runAs, timeout: 10_000 }, (error) =>
          resolve(error ? Number((error as { code?: number }).code ?? 1) : 0),
        );
      });
      assert.equal(healthy, 0, 'HEALTHCHECK exit code');
      const ready = await fetch(`http://127.0.0.1:${controlPort}/readyz`);
      assert.deepEqual(await ready.json(), { status: 'ready', checks: { startup: 'ok', database: 'ok' } });

      // Everything the platform made in its data directory belongs to its user.
      for (const made of ['secret.key', 'operator-token', 'pglite', path.join('sip-tls', 'sip-cert.pem')]) {
        assert.equal(statSync(path.join(dataDir, made)).uid, runUid, made);
      }
      assert.equal(await stop(started), 0, started.stderr);
    } finally {
      if (started.child.exitCode === null) started.child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('with a TLS folder its user cannot write, starts without TLS and names that folder, not openssl', async () => {
    const dataDir = dataDirForRunUser();
    // Left behind by a run as another user (root) on the same volume: not writable by this one.
    const tlsDir = path.join(dataDir, 'sip-tls');
    mkdirSync(tlsDir, { mode: 0o755 });
    if (!isRoot) chmodSync(tlsDir, 0o555);
    const started = spawnPlatform({ ...loopbackEnv(dataDir, await freeTcpPort()), ROLES: 'gateway' }, [], { built: true, root: runRoot, ...runAs });
    try {
      await waitForLine(started, 'platform started', 90_000);
      const listening = started.lines.find((l) => String(l['msg']).startsWith('SIP gateway listening'));
      assert.ok(listening, started.stderr);
      assert.equal((listening['ports'] as Record<string, number>)['TLS'], undefined);
      const warning = started.lines.find((l) => String(l['msg']).startsWith('SIP over TLS disabled'));
      assert.ok(warning, started.stderr);
      assert.equal(warning['failure'], 'data-dir-not-writable');
      const msg = String(warning['msg']);
      assert.ok(msg.includes(`not writable by this process (uid ${runUid}): cannot create or write ${tlsDir} (EACCES)`), msg);
      assert.match(msg, /give this user write access to the data directory \(dataDir \/ DATA_DIR\), or set sip\.tlsCertFile and sip\.tlsKeyFile$/);
      assert.doesNotMatch(msg, /install openssl/);
      assert.equal(await stop(started), 0, started.stderr);
    } finally {
      if (started.child.exitCode === null) started.child.kill('SIGKILL');
      chmodSync(tlsDir, 0o755);
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("runs a Code block's JavaScript in the QuickJS worker from dist/", async () => {
    // A script file, not \`node -e\`: a worker inherits the parent's flags, and \`--input-type\` breaks it.
    const scriptDir = mkdtempSync(path.join(tmpdir(), 'vap-built-code-'));
    const scriptFile = path.join(scriptDir, 'run-code.mjs');
    chmodSync(scriptDir, 0o755);
    const runner = pathToFileURL(path.join(runRoot, 'dist/control-api/features/recipes/code-sandbox/quickjs-code-runner.js')).href;
    const script = `
      const { QuickJsCodeRunner } = await import(${JSON.stringify(runner)});
      const runner = new QuickJsCodeRunner({ workers: 1 });
      const result = await runner.run({ source: 'function main(context, variables) { variables.answer = 6 * 7; }', context: {}, variables: {},
        timeoutMs: 10000, signal: new AbortController().signal, now: 0, today: '2026-01-01' });
      await runner.close();
      process.stdout.write(JSON.stringify(result));`;
    writeFileSync(scriptFile, script, { mode: 0o644 });
    const output = await new Promise<string>((resolve, reject) => {
      execFile(process.execPath, ['--import', './test/helpers/production-only/register.mjs', scriptFile], { cwd: runRoot, env: withoutCoverage(), ...runAs, timeout: 60_000 }, (error, stdout, stderr) =>
        error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
      );
    }).finally(() => rmSync(scriptDir, { recursive: true, force: true }));
    const result = JSON.parse(output) as { ok: boolean; variables?: Record<string, unknown> };
    assert.equal(result.ok, true, output);
    assert.deepEqual(result.variables, { answer: 42 });
  });

  it("decodes with the offline recogniser's worker from dist/ (the copy the image ships)", async () => {
    const scriptDir = mkdtempSync(path.join(tmpdir(), 'vap-built-recogniser-'));
    const scriptFile = path.join(scriptDir, 'decode.mjs');
    chmodSync(scriptDir, 0o755);
    // From the readable copy: the checkout may lie under a 0700 folder the other uid cannot enter.
    const pool = pathToFileURL(path.join(runRoot, 'dist/media/speech/recogniser/recogniser-pool.js')).href;
    // Half a second of a low hum against a one-word grammar: what matters is that a worker from
    // dist/ starts, loads the model and answers, not what it hears.
    const script = `
      const { RecogniserPool } = await import(${JSON.stringify(pool)});
      const pool = new RecogniserPool({ size: 1 });
      const pcm = Int16Array.from({ length: 8000 }, (_, i) => Math.round(300 * Math.sin(i / 5)));
      const result = await pool.decode({ search: { jsgf: '#JSGF V1.0;\\ngrammar g;\\npublic <u> = yes;\\n' }, pcm }, new AbortController().signal);
      await pool.stop();
      process.stdout.write(JSON.stringify({ frames: result.frames, compiled: result.compiled }));`;
    writeFileSync(scriptFile, script, { mode: 0o644 });
    const output = await new Promise<string>((resolve, reject) => {
      execFile(process.execPath, ['--import', './test/helpers/production-only/register.mjs', scriptFile], { cwd: runRoot, env: withoutCoverage(), ...runAs, timeout: 60_000 }, (error, stdout, stderr) =>
        error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
      );
    }).finally(() => rmSync(scriptDir, { recursive: true, force: true }));
    assert.deepEqual(JSON.parse(output), { frames: 50, compiled: true });
  });
});
