import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** One program run through the spawner: its stdout as it comes, then how it ended. */
export interface SpawnedRun {
  readonly stdout: AsyncIterable<Buffer>;
  /** Exit code (null: killed), the first 2,000 bytes of its stderr. */
  readonly ended: Promise<{ readonly code: number | null; readonly stderr: string }>;
}

export class SpawnError extends Error {
  override readonly name = 'SpawnError';
}

const defaultScript = fileURLToPath(new URL('./spawner.py', import.meta.url));

interface Pending {
  readonly chunks: Buffer[];
  wake: (() => void) | undefined;
  done: boolean;
  failure: Error | undefined;
  settle: (result: { code: number | null; stderr: string }) => void;
  reject: (error: Error) => void;
}

/**
 * Runs short-lived programs through a small long-lived helper process (spawner.py under Debian's
 * /usr/bin/python3) instead of forking this one: a spawn from Node copies the Node process's page
 * tables on the event loop, 12-75 ms median at 258-680 MB RSS, and every call's audio stalls for
 * it (docs/sip-stack.md, issue 30). The helper's own forks are cheap and happen on its threads.
 * One helper per process, started on first use and again after it died; while it cannot be
 * started (no python3) programs are spawned directly, as before.
 */
export class ProcessSpawner {
  private child: ChildProcess | undefined;
  private ready: Promise<boolean> | undefined;
  /** The runs of the current helper (a helper that died fails its own runs only). */
  private pending = new Map<number, Pending>();
  private nextId = 1;
  private buffer: Buffer = Buffer.alloc(0);
  /** The data frame being read: its run and how many bytes are still to come. */
  private frame: { readonly id: number; remaining: number } | undefined;

  constructor(private readonly options: { readonly python?: string; readonly script?: string } = {}) {}

  /** Runs `argv` with `stdin` as its input; aborting kills it. */
  async run(argv: readonly string[], stdin: string, signal: AbortSignal): Promise<SpawnedRun> {
    if (!(await this.start())) return direct(argv, stdin, signal);
    const id = this.nextId++;
    let settle!: Pending['settle'];
    let reject!: Pending['reject'];
    const ended = new Promise<{ code: number | null; stderr: string }>((res, rej) => {
      settle = res;
      reject = rej;
    });
    const entry: Pending = { chunks: [], wake: undefined, done: false, failure: undefined, settle, reject };
    ended.catch(() => undefined);
    this.pending.set(id, entry);
    const kill = (): void => {
      if (this.pending.has(id)) this.write({ id, kill: true });
    };
    signal.addEventListener('abort', kill, { once: true });
    void ended.finally(() => signal.removeEventListener('abort', kill)).catch(() => undefined);
    this.write({ id, argv, stdin });
    const stdout = async function* (): AsyncGenerator<Buffer> {
      for (;;) {
        const chunk = entry.chunks.shift();
        if (chunk) {
          yield chunk;
          continue;
        }
        if (entry.failure) throw entry.failure;
        if (entry.done) return;
        await new Promise<void>((wake) => (entry.wake = wake));
      }
    };
    return { stdout: stdout(), ended };
  }

  /** Stops the helper (its programs are killed with it). */
  stop(): void {
    this.child?.stdin?.end();
    this.child?.kill();
    this.child = undefined;
    this.ready = undefined;
  }

  private start(): Promise<boolean> {
    if (this.ready) return this.ready;
    const child = spawn(this.options.python ?? '/usr/bin/python3', [this.options.script ?? defaultScript], { stdio: ['pipe', 'pipe', 'ignore'] });
    this.child = child;
    const pending = new Map<number, Pending>();
    this.pending = pending;
    this.buffer = Buffer.alloc(0);
    this.frame = undefined;
    // The helper must not keep the process alive, nor take it down with a broken pipe.
    child.unref();
    child.stdin?.on('error', () => undefined);
    for (const pipe of [child.stdin, child.stdout]) (pipe as unknown as { unref?: () => void } | null)?.unref?.();
    this.ready = new Promise<boolean>((resolve) => {
      let readySeen = false;
      child.stdout?.on('data', (data: Buffer) => {
        if (this.child !== child) return;
        this.buffer = this.buffer.length ? Buffer.concat([this.buffer, data]) : data;
        readySeen = this.readFrames(readySeen, () => resolve(true));
      });
      const gone = (why: string): void => {
        if (this.child === child) {
          this.child = undefined;
          this.ready = undefined;
        }
        resolve(false);
        for (const [id, p] of pending) {
          pending.delete(id);
          fail(p, new SpawnError(`the spawner stopped (${why})`));
        }
      };
      child.on('error', (error) => gone(error.message));
      child.on('exit', (code, sig) => gone(sig ?? `exit ${String(code)}`));
    });
    return this.ready;
  }

  /** Reads the complete frames in the buffer; returns whether the ready line was seen. */
  private readFrames(readySeen: boolean, onReady: () => void): boolean {
    for (;;) {
      if (this.frame) {
        const take = Math.min(this.frame.remaining, this.buffer.length);
        if (take === 0) return readySeen;
        const p = this.pending.get(this.frame.id);
        if (p) {
          p.chunks.push(this.buffer.subarray(0, take));
          p.wake?.();
        }
        this.buffer = this.buffer.subarray(take);
        this.frame.remaining -= take;
        if (this.frame.remaining === 0) this.frame = undefined;
        continue;
      }
      const nl = this.buffer.indexOf(10);
      if (nl < 0) return readySeen;
      let header: { ready?: boolean; id?: number; data?: number; exit?: number; stderr?: string; error?: string };
      try {
        header = JSON.parse(this.buffer.subarray(0, nl).toString()) as typeof header;
      } catch {
        // Not the protocol (a stray line from the interpreter): the stream cannot be trusted any
        // more. Its runs fail when it exits; the next run starts a new helper.
        this.buffer = Buffer.alloc(0);
        this.child?.kill();
        return readySeen;
      }
      this.buffer = this.buffer.subarray(nl + 1);
      if (header.ready) {
        readySeen = true;
        onReady();
        continue;
      }
      const p = header.id === undefined ? undefined : this.pending.get(header.id);
      if (header.data !== undefined) {
        this.frame = { id: header.id ?? 0, remaining: header.data };
        continue;
      }
      if (!p || header.id === undefined) continue;
      this.pending.delete(header.id);
      if (header.error !== undefined) {
        fail(p, new SpawnError(header.error));
        continue;
      }
      p.done = true;
      p.wake?.();
      // Python reports a signal as a negative code (-9: SIGKILL), Node as null.
      p.settle({ code: header.exit !== undefined && header.exit >= 0 ? header.exit : null, stderr: header.stderr ?? '' });
    }
  }

  private write(message: object): void {
    this.child?.stdin?.write(`${JSON.stringify(message)}\n`);
  }
}

function fail(p: Pending, error: Error): void {
  p.failure = error;
  p.done = true;
  p.wake?.();
  p.reject(error);
}

/** The program spawned from this process (no helper): what every spawn was before. */
function direct(argv: readonly string[], stdin: string, signal: AbortSignal): SpawnedRun {
  const [file, ...args] = argv;
  const child = spawn(file ?? '', args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const kill = (): void => void child.kill('SIGKILL');
  signal.addEventListener('abort', kill, { once: true });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    if (stderr.length < 2000) stderr += d.toString();
  });
  child.stdin.on('error', () => undefined);
  child.stdin.end(stdin);
  const ended = new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
    child.on('error', (error) => reject(new SpawnError(error.message)));
    child.on('close', (code) => resolve({ code, stderr }));
  }).finally(() => signal.removeEventListener('abort', kill));
  ended.catch(() => undefined);
  return { stdout: child.stdout as AsyncIterable<Buffer>, ended };
}

let shared: ProcessSpawner | undefined;

/** The process's spawner. */
export function processSpawner(): ProcessSpawner {
  return (shared ??= new ProcessSpawner());
}
