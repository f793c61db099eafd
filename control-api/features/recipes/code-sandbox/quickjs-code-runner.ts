import { Worker } from 'node:worker_threads';
import type { CodeRunRequest, CodeRunResult, CodeRunner } from '../runtime/services.js';
import type { SandboxJob, SandboxReply } from './sandbox-protocol.js';

/**
 * Runs Code block JavaScript in QuickJS (WebAssembly) inside worker threads. QuickJS is the
 * isolation boundary (its global has no process, require, fetch or filesystem); the worker is
 * the blast radius: if a run overshoots its deadline by `killGraceMs` (a wasm allocation storm
 * or a stuck interrupt), the worker is terminated and replaced, never waited for.
 */
export interface QuickJsCodeRunnerOptions {
  /** Workers kept for concurrent runs. Default 2. */
  readonly workers?: number;
  /** QuickJS heap cap per run. Default 32 MiB. */
  readonly memoryLimitBytes?: number;
  /** Extra time before the worker is killed. Default 1000 ms. */
  readonly killGraceMs?: number;
}

interface Slot {
  worker: Worker;
  ready: Promise<void>;
  busy: boolean;
}

interface Pending {
  readonly job: SandboxJob;
  readonly signal: AbortSignal;
  readonly resolve: (result: CodeRunResult) => void;
}

/**
 * The worker entry beside this module: `sandbox-worker.js` in the built `dist/` that production
 * runs, `sandbox-worker.ts` when this module itself runs as TypeScript (tests, under tsx).
 */
const fromSource = import.meta.url.endsWith('.ts');
const workerUrl = new URL(fromSource ? './sandbox-worker.ts' : './sandbox-worker.js', import.meta.url);

/** A worker that has not loaded by then is used anyway: the job's own limit then ends it. */
const WORKER_START_LIMIT_MS = 30_000;

export class QuickJsCodeRunner implements CodeRunner {
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private nextId = 1;
  private closed = false;

  constructor(private readonly options: QuickJsCodeRunnerOptions = {}) {}

  run(request: CodeRunRequest): Promise<CodeRunResult> {
    if (this.closed) return Promise.resolve({ ok: false, kind: 'runtime', error: 'code runner is closed' });
    const job: SandboxJob = {
      id: this.nextId++,
      source: request.source,
      context: request.context,
      variables: request.variables,
      timeoutMs: request.timeoutMs,
      memoryLimitBytes: this.options.memoryLimitBytes ?? 32 * 1024 * 1024,
      now: request.now,
      today: request.today,
    };
    return new Promise((resolve) => {
      this.queue.push({ job, signal: request.signal, resolve });
      this.pump();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.slots.splice(0).map((slot) => slot.worker.terminate()));
  }

  private pump(): void {
    while (this.queue.length > 0) {
      const slot = this.idleSlot();
      if (!slot) return;
      const pending = this.queue.shift() as Pending;
      if (pending.signal.aborted) {
        pending.resolve({ ok: false, kind: 'cancelled', error: 'the call ended before the code ran' });
        continue;
      }
      void this.dispatch(slot, pending);
    }
  }

  private idleSlot(): Slot | undefined {
    const idle = this.slots.find((s) => !s.busy);
    if (idle) return idle;
    if (this.slots.length >= (this.options.workers ?? 2)) return undefined;
    const slot = this.spawn();
    this.slots.push(slot);
    return slot;
  }

  private spawn(): Slot {
    const resourceLimits = { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 16 };
    // Node resolves a worker's entry before any --import hook runs, so a .ts entry needs this
    // small bootstrap that registers the TypeScript loader (tsx, a devDependency) first. The
    // built JavaScript needs no loader.
    const worker = fromSource
      ? new Worker(`import('tsx/esm/api').then((m) => { m.register(); return import(${JSON.stringify(workerUrl.href)}); });`, { eval: true, resourceLimits })
      : new Worker(workerUrl, { resourceLimits });
    worker.unref();
    // A job's time limit is the code's time, not the worker's start-up (loading QuickJS's wasm
    // takes seconds on a loaded host): the clock starts once the worker says it is ready.
    const ready = new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(bound);
        worker.off('message', onMessage);
        worker.off('error', done);
        worker.off('exit', done);
        resolve();
      };
      const onMessage = (message: unknown): void => {
        if (typeof message === 'object' && message !== null && 'ready' in message) done();
      };
      const bound = setTimeout(done, WORKER_START_LIMIT_MS);
      worker.on('message', onMessage);
      worker.once('error', done);
      worker.once('exit', done);
    });
    return { worker, ready, busy: false };
  }

  private async dispatch(slot: Slot, pending: Pending): Promise<void> {
    slot.busy = true;
    const { job } = pending;
    await slot.ready;
    const result = await new Promise<CodeRunResult>((resolve) => {
      let settled = false;
      const finish = (outcome: CodeRunResult, kill: boolean): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        slot.worker.off('message', onMessage);
        slot.worker.off('error', onError);
        slot.worker.off('exit', onExit);
        pending.signal.removeEventListener('abort', onAbort);
        if (kill) this.replace(slot);
        resolve(outcome);
      };
      const onMessage = (reply: SandboxReply): void => {
        if (reply.id !== job.id) return;
        if (reply.ok) finish({ ok: true, returned: reply.returned, variables: reply.variables, logs: reply.logs }, false);
        else finish({ ok: false, kind: reply.kind, error: reply.error }, false);
      };
      const onError = (error: Error): void => {
        const memory = /memory|heap|allocation/i.test(error.message);
        finish({ ok: false, kind: memory ? 'memory' : 'runtime', error: memory ? 'the code exceeded its memory limit' : `sandbox crashed: ${error.message}` }, true);
      };
      const onExit = (): void => finish({ ok: false, kind: 'memory', error: 'the sandbox worker died (resource limit)' }, true);
      const onAbort = (): void => finish({ ok: false, kind: 'cancelled', error: 'the call ended while the code ran' }, true);
      const timer = setTimeout(
        () => finish({ ok: false, kind: 'timeout', error: 'the code ran past its time limit (worker killed)' }, true),
        job.timeoutMs + (this.options.killGraceMs ?? 1000),
      );
      slot.worker.on('message', onMessage);
      slot.worker.on('error', onError);
      slot.worker.on('exit', onExit);
      pending.signal.addEventListener('abort', onAbort, { once: true });
      slot.worker.postMessage(job);
    });
    slot.busy = false;
    pending.resolve(result);
    this.pump();
  }

  private replace(slot: Slot): void {
    const index = this.slots.indexOf(slot);
    if (index !== -1) this.slots.splice(index, 1);
    void slot.worker.terminate();
  }
}
