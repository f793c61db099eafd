import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../../../core/logger.js';
import { SpeechProviderError } from '../speech-provider.js';
import { encodeRequest, LineSplitter, parseWorkerLine, type DecodeRequest, type DecodeResult, type RecogniserLoad, type WorkerMessage } from './protocol.js';
import { livePools, recogniserMetrics } from './recogniser-metrics.js';

/**
 * A small pool of long-lived pocketsphinx decoders (worker.py under Debian's /usr/bin/python3),
 * shared by every call of the process: each caller turn is one request, queued until a worker
 * is free. The model stays loaded and each grammar is compiled once per worker, so a turn costs
 * its decode only (pocketsphinx_continuous loaded the model and cut the audio with its own VAD
 * on every decode, two to four times per turn).
 *
 * A worker that dies takes its request with it: the worker is started again and the request is
 * tried once more on the next free worker; a second failure fails the request. A decode that
 * runs past `decodeTimeoutMs` is killed and not retried (the same audio would hang again).
 */
export interface RecogniserPoolOptions {
  /** Workers (decoders) at once; default the machine's cores (at least 1, at most 8). */
  readonly size?: number;
  /** Debian's Python (the pyenv python3 on a developer's PATH has no pocketsphinx module). */
  readonly python?: string;
  readonly workerScript?: string;
  readonly logger?: Logger;
  /** A decode taking longer is killed (default 20 s, pocketsphinx_continuous's old limit). */
  readonly decodeTimeoutMs?: number;
}

interface Job {
  readonly request: DecodeRequest;
  readonly signal: AbortSignal;
  readonly resolve: (result: DecodeResult | undefined) => void;
  readonly reject: (error: Error) => void;
  /** Times a worker died while decoding it. */
  failures: number;
  readonly queuedAt: number;
}

interface Slot {
  readonly child: ChildProcessWithoutNullStreams;
  ready: boolean;
  job?: { readonly id: number; readonly job: Job; readonly timer: NodeJS.Timeout };
  /** The last lines the worker wrote on stderr (Python tracebacks), for the crash log. */
  readonly stderr: string[];
}

const defaultWorkerScript = fileURLToPath(new URL('./worker.py', import.meta.url));
/** Restarts after a start failure wait 1 s, 2 s, 4 s ... up to 30 s (a missing package must not spin). */
const maxBackoffMs = 30_000;

export class RecogniserPool {
  readonly size: number;
  private readonly slots = new Set<Slot>();
  private readonly queue: Job[] = [];
  private nextId = 1;
  private stopping = false;
  /** Why the last worker could not start (python3-pocketsphinx missing ...), while none is running. */
  private startFailure: string | undefined;
  private startFailures = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  private readonly readyWaiters: { resolve: () => void; reject: (e: Error) => void }[] = [];

  constructor(private readonly options: RecogniserPoolOptions = {}) {
    this.size = Math.max(1, Math.min(8, options.size ?? availableParallelism()));
  }

  /** Starts every worker and resolves once one is ready (rejects when none can start). */
  start(): Promise<void> {
    if (this.stopping) return Promise.reject(new SpeechProviderError('pocketsphinx', 'the offline recogniser stopped', false));
    this.fill();
    if ([...this.slots].some((s) => s.ready)) return Promise.resolve();
    return new Promise((resolve, reject) => this.readyWaiters.push({ resolve, reject }));
  }

  /**
   * Starts the workers if they are not running, without waiting: a turn that has just begun gets
   * its decoders loaded while the caller is still speaking.
   */
  warm(): void {
    this.fill();
  }

  /**
   * Decodes one utterance on the next free worker. Resolves undefined when `signal` aborts first
   * (a queued request is dropped; one being decoded finishes in its worker and is ignored).
   */
  decode(request: DecodeRequest, signal: AbortSignal): Promise<DecodeResult | undefined> {
    if (signal.aborted) return Promise.resolve(undefined);
    if (this.stopping) return Promise.reject(new SpeechProviderError('pocketsphinx', 'the offline recogniser is shutting down', false));
    if (this.startFailure && ![...this.slots].some((s) => s.ready)) {
      // No worker could start (the package or the model is missing): say so at once instead of
      // queueing turns behind a worker that will not come.
      this.fill();
      return Promise.reject(new SpeechProviderError('pocketsphinx', this.startFailure, false));
    }
    return new Promise((resolve, reject) => {
      // The listener goes with the request: a call's signal sees dozens of turns.
      const onAbort = (): void => this.drop(job);
      const settled = <T>(settle: (value: T) => void) => (value: T): void => {
        signal.removeEventListener('abort', onAbort);
        settle(value);
      };
      const job: Job = { request, signal, resolve: settled(resolve), reject: settled(reject), failures: 0, queuedAt: performance.now() };
      signal.addEventListener('abort', onAbort, { once: true });
      this.queue.push(job);
      this.fill();
      this.dispatch();
    });
  }

  load(): RecogniserLoad {
    return { queued: this.queue.length, busy: [...this.slots].filter((s) => s.job).length, workers: this.size };
  }

  /** Requests waiting for a free worker (admission control's reading of the offline recogniser). */
  queueDepth(): number {
    return this.queue.length;
  }

  /** Process ids of the running workers. */
  workerPids(): number[] {
    return [...this.slots].map((s) => s.child.pid).filter((pid): pid is number => pid !== undefined);
  }

  /** Stops every worker: queued requests fail, a decode under way may finish for up to `graceMs`. */
  async stop(graceMs = 2_000): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restartTimer);
    livePools.delete(this);
    for (const job of this.queue.splice(0)) job.reject(new SpeechProviderError('pocketsphinx', 'the offline recogniser stopped', false));
    for (const waiter of this.readyWaiters.splice(0)) waiter.reject(new SpeechProviderError('pocketsphinx', 'the offline recogniser stopped', false));
    await Promise.all(
      [...this.slots].map(
        (slot) =>
          new Promise<void>((resolve) => {
            if (slot.child.exitCode !== null || slot.child.signalCode !== null) return resolve();
            const kill = setTimeout(() => slot.child.kill('SIGKILL'), graceMs);
            slot.child.once('exit', () => {
              clearTimeout(kill);
              resolve();
            });
            // End of input is the worker's signal to exit once its current decode is written.
            slot.child.stdin.end();
          }),
      ),
    );
  }

  /** Starts workers until the pool has `size` of them (none while a start failure backs off). */
  private fill(): void {
    if (this.stopping || this.restartTimer) return;
    livePools.add(this);
    while (this.slots.size < this.size) this.spawn();
  }

  private spawn(): void {
    const child = spawn(this.options.python ?? '/usr/bin/python3', [this.options.workerScript ?? defaultWorkerScript], { stdio: ['pipe', 'pipe', 'pipe'] });
    const slot: Slot = { child, ready: false, stderr: [] };
    this.slots.add(slot);
    // Held until it is ready: whoever awaits start() must not see the process exit first.
    this.hold(slot, true);
    const lines = new LineSplitter();
    child.stdout.on('data', (chunk: Buffer) => lines.push(chunk, (line) => this.onLine(slot, line)));
    child.stderr.on('data', (chunk: Buffer) => {
      slot.stderr.push(...chunk.toString().split('\n').filter(Boolean));
      slot.stderr.splice(0, Math.max(0, slot.stderr.length - 20));
    });
    // A worker that died mid-write must not crash the process with EPIPE; its exit is handled below.
    child.stdin.on('error', () => undefined);
    child.on('error', (error) => this.onExit(slot, `could not start ${this.options.python ?? '/usr/bin/python3'}: ${error.message}`));
    child.on('exit', (code, signal) => this.onExit(slot, `exited (${signal ?? `code ${code}`})`));
  }

  private onLine(slot: Slot, line: string): void {
    const message = parseWorkerLine(line);
    if (!message) return;
    if (message.kind === 'ready') return this.onReady(slot);
    if (message.kind === 'fatal') {
      this.startFailure = message.reason;
      return;
    }
    this.onResponse(slot, message);
  }

  private onReady(slot: Slot): void {
    slot.ready = true;
    this.hold(slot, false);
    this.startFailure = undefined;
    this.startFailures = 0;
    for (const waiter of this.readyWaiters.splice(0)) waiter.resolve();
    this.dispatch();
  }

  private onResponse(slot: Slot, message: Extract<WorkerMessage, { kind: 'result' | 'failed' }>): void {
    const current = slot.job;
    if (!current || current.id !== message.id) return;
    clearTimeout(current.timer);
    slot.job = undefined;
    this.hold(slot, false);
    const { job } = current;
    if (message.kind === 'failed') job.reject(new SpeechProviderError('pocketsphinx', `recognition failed: ${message.reason}`, false));
    else {
      recogniserMetrics.decodeSeconds.observe(message.result.decodeMs / 1000);
      job.resolve(job.signal.aborted ? undefined : message.result);
    }
    this.dispatch();
  }

  private onExit(slot: Slot, how: string): void {
    if (!this.slots.delete(slot)) return;
    const current = slot.job;
    if (current) clearTimeout(current.timer);
    if (this.stopping) {
      current?.job.reject(new SpeechProviderError('pocketsphinx', 'the offline recogniser stopped', false));
      return;
    }
    const detail = slot.stderr.slice(-3).join(' | ');
    if (!slot.ready) {
      // It never came up: a missing package or model, or a machine out of memory. Back off.
      this.startFailure ??= `the recogniser worker did not start: ${how}${detail ? `: ${detail}` : ''}`;
      this.startFailures++;
      this.options.logger?.error({ reason: this.startFailure }, 'offline recogniser worker could not start');
      if (![...this.slots].some((s) => s.ready)) {
        for (const waiter of this.readyWaiters.splice(0)) waiter.reject(new SpeechProviderError('pocketsphinx', this.startFailure, false));
        for (const job of this.queue.splice(0)) job.reject(new SpeechProviderError('pocketsphinx', this.startFailure, false));
      }
      const wait = Math.min(maxBackoffMs, 1000 * 2 ** (this.startFailures - 1));
      this.restartTimer ??= setTimeout(() => {
        this.restartTimer = undefined;
        this.fill();
      }, wait).unref();
      return;
    }
    recogniserMetrics.restarts.labels(current?.job ? 'crash-in-decode' : 'crash').inc();
    this.options.logger?.warn({ pid: slot.child.pid, how, stderr: detail || undefined, inFlight: Boolean(current) }, 'offline recogniser worker died: starting another');
    if (current) {
      const { job } = current;
      // The turn is tried once more on another worker; twice is a pattern, not bad luck.
      if (++job.failures > 1) job.reject(new SpeechProviderError('pocketsphinx', `the recogniser worker died twice on this utterance (${how})`, true));
      else if (!job.signal.aborted) this.queue.unshift(job);
      else job.resolve(undefined);
    }
    this.fill();
    this.dispatch();
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (!slot.ready || slot.job) continue;
      let job = this.queue.shift();
      while (job && job.signal.aborted) {
        job.resolve(undefined);
        job = this.queue.shift();
      }
      if (!job) return;
      const id = this.nextId++;
      recogniserMetrics.waitSeconds.observe((performance.now() - job.queuedAt) / 1000);
      const timer = setTimeout(() => this.onTimeout(slot), this.options.decodeTimeoutMs ?? 20_000);
      slot.job = { id, job, timer };
      this.hold(slot, true);
      slot.child.stdin.write(encodeRequest(id, job.request));
    }
  }

  private onTimeout(slot: Slot): void {
    const current = slot.job;
    if (!current) return;
    slot.job = undefined;
    recogniserMetrics.restarts.labels('timeout').inc();
    this.options.logger?.warn({ pid: slot.child.pid, timeoutMs: this.options.decodeTimeoutMs ?? 20_000 }, 'offline recogniser decode timed out: worker killed');
    current.job.reject(new SpeechProviderError('pocketsphinx', 'recognition timed out', true));
    slot.child.kill('SIGKILL');
  }

  /**
   * An idle pool must not keep a process (a bench, a CLI command) alive: its workers' pipes hold
   * the event loop only while a worker starts or decodes.
   */
  private hold(slot: Slot, busy: boolean): void {
    const handles = [slot.child, slot.child.stdout, slot.child.stderr, slot.child.stdin] as unknown as { ref?(): void; unref?(): void }[];
    for (const h of handles) {
      if (busy) h.ref?.();
      else h.unref?.();
    }
  }

  /** Drops a request whose caller gave up before a worker took it. */
  private drop(job: Job): void {
    const at = this.queue.indexOf(job);
    if (at < 0) return;
    this.queue.splice(at, 1);
    job.resolve(undefined);
  }
}
