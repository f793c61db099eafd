import { spawn } from 'node:child_process';
import path from 'node:path';

const repoRoot = path.resolve(import.meta.dirname, '../..');

/** The real platform process (`bin/platform.ts`, or the built `dist/bin/platform.js`), its JSON log lines and its stderr. */
export interface PlatformProcess {
  readonly child: ReturnType<typeof spawn>;
  readonly lines: Array<Record<string, unknown>>;
  /** Stdout lines that were not JSON (a stack trace printed by hand would land here). */
  readonly rawLines: string[];
  stderr: string;
}

export interface SpawnOptions {
  /**
   * Run the built `dist/bin/platform.js` with plain node, as `npm start` and the image do, with
   * devDependencies and TypeScript made unresolvable (helpers/production-only); `'plain'`: the
   * same file with node_modules as installed (benches measuring the compiled platform); otherwise
   * the TypeScript source runs under tsx.
   */
  readonly built?: boolean | 'plain';
  /**
   * Run as this user (the caller must be root): the image runs as an unprivileged one. That user
   * may not be able to read the checkout (a clone under root's 0700 home): pass `root`, a copy
   * made by `stageForUser()`; coverage is not collected from such a process (c8's folder is ours).
   */
  readonly uid?: number;
  readonly gid?: number;
  /** The folder to run from instead of the repository (a `stageForUser()` copy). */
  readonly root?: string;
  /** Node options before the entry point (e.g. `--cpu-prof`, which NODE_OPTIONS refuses). */
  readonly nodeArgs?: readonly string[];
  /**
   * Its own session (setsid): with Linux's autogroup scheduling the platform then gets a share of
   * the CPU of its own, as a node on its own machine would, rather than sharing the share of the
   * bench that drives it (benches on a shared machine).
   */
  readonly ownSession?: boolean;
}

/**
 * Every listener on loopback at a port of the kernel's choosing unless the test says otherwise:
 * test files run in parallel, and two platforms on a default port (8082, 5060 on 0.0.0.0) would
 * meet, one exiting 69. Tests read the ports they use from the "... listening" log lines.
 */
export const isolatedListeners: Readonly<Record<string, string>> = {
  CONTROL_HOST: '127.0.0.1', CONTROL_PORT: '0',
  SANDBOX_HOST: '127.0.0.1', SANDBOX_PORT: '0',
  PROVIDERS_HOST: '127.0.0.1', PROVIDERS_PORT: '0',
  SIP_HOST: '127.0.0.1', SIP_PORT: '0', SIP_TLS_PORT: '0', SIP_WS_PORT: '0', SIP_WSS_PORT: '0',
};

export function spawnPlatform(env: Record<string, string>, args: string[] = [], options: SpawnOptions = {}): PlatformProcess {
  const entry =
    options.built === 'plain'
      ? ['dist/bin/platform.js']
      : options.built
        ? ['--import', './test/helpers/production-only/register.mjs', 'dist/bin/platform.js']
        : ['--import', 'tsx', 'bin/platform.ts'];
  const inherited = { ...process.env };
  if (options.uid !== undefined) delete inherited['NODE_V8_COVERAGE'];
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), ...entry, ...args], {
    cwd: options.root ?? repoRoot,
    env: { ...inherited, LOG_LEVEL: 'info', ...isolatedListeners, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.ownSession ? { detached: true } : {}),
    ...(options.uid !== undefined ? { uid: options.uid } : {}),
    ...(options.gid !== undefined ? { gid: options.gid } : {}),
  });
  const started: PlatformProcess = { child, lines: [], rawLines: [], stderr: '' };
  let buffer = '';
  child.stdout!.on('data', (d: Buffer) => {
    buffer += d.toString();
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      try {
        started.lines.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        started.rawLines.push(line);
      }
    }
  });
  child.stderr!.on('data', (d: Buffer) => (started.stderr += d.toString()));
  return started;
}

/** The first log line with this message; fails when the process exits or the deadline passes. */
export async function waitForLine(started: PlatformProcess, msg: string, timeoutMs = 120_000): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const hit = started.lines.find((l) => l['msg'] === msg);
    if (hit) return hit;
    // The fatal line (a listener that could not bind, say) is on stdout, as JSON.
    const fatal = started.lines.filter((l) => l['level'] === 'fatal' || l['level'] === 60).map((l) => JSON.stringify(l)).join('\n');
    if (started.child.exitCode !== null) throw new Error(`platform exited ${started.child.exitCode}: ${fatal}${started.stderr}`);
    if (Date.now() > deadline) throw new Error(`no "${msg}" log line within ${timeoutMs} ms: ${started.stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The exit code, or a failure when the process is still running after `timeoutMs`. */
export async function exitCode(started: PlatformProcess, timeoutMs = 120_000): Promise<number | null> {
  const deadline = Date.now() + timeoutMs;
  while (started.child.exitCode === null && started.child.signalCode === null) {
    if (Date.now() > deadline) {
      started.child.kill('SIGKILL');
      throw new Error(`platform still running after ${timeoutMs} ms: ${started.stderr}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return started.child.exitCode;
}
