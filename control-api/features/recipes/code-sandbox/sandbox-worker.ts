import { parentPort } from 'node:worker_threads';
import { newQuickJSWASMModuleFromVariant, type QuickJSContext, type QuickJSHandle } from 'quickjs-emscripten-core';
import { pluginsPrelude } from './plugins-prelude.js';
import type { SandboxJob, SandboxReply } from './sandbox-protocol.js';

/**
 * Worker side of the Code block sandbox. Each job gets a fresh QuickJS runtime with a memory cap,
 * a stack cap and an interrupt deadline; the parent still kills this worker if it overruns,
 * because a wasm allocation storm is not always stopped by QuickJS's own limit.
 */
const quickjs = await newQuickJSWASMModuleFromVariant(import('@jitl/quickjs-wasmfile-release-sync'));

parentPort?.on('message', (job: SandboxJob) => {
  let reply: SandboxReply;
  try {
    reply = runJob(job);
  } catch (error) {
    reply = { id: job.id, ok: false, kind: 'runtime', error: `sandbox failure: ${error instanceof Error ? error.message : String(error)}` };
  }
  parentPort?.postMessage(reply);
});
// Loaded (the wasm module above took its time): the pool starts a job's clock only now.
parentPort?.postMessage({ ready: true });

function runJob(job: SandboxJob): SandboxReply {
  const runtime = quickjs.newRuntime();
  runtime.setMemoryLimit(job.memoryLimitBytes);
  runtime.setMaxStackSize(256 * 1024);
  const deadline = Date.now() + job.timeoutMs;
  let interrupted = false;
  runtime.setInterruptHandler(() => {
    interrupted = Date.now() > deadline;
    return interrupted;
  });
  const vm = runtime.newContext();
  try {
    const setup = [
      `globalThis.__now = ${Number(job.now)};`,
      `globalThis.__today = ${JSON.stringify(job.today)};`,
      `globalThis.__input = JSON.parse(${JSON.stringify(JSON.stringify({ context: job.context, variables: job.variables }))});`,
      pluginsPrelude,
    ].join('\n');
    const prepared = evaluate(vm, setup, 'setup.js');
    if (!prepared.ok) return { id: job.id, ok: false, kind: 'runtime', error: `sandbox setup failed: ${prepared.error}` };
    const loaded = evaluate(vm, job.source, 'code-block.js');
    if (!loaded.ok) return { id: job.id, ...classify(loaded.error, loaded.name, interrupted) };
    const driver = `
      globalThis.__state = 'pending';
      (function () {
        if (typeof main !== 'function') throw new TypeError('the code must define a function named main');
        const context = Object.freeze(__input.context);
        const variables = __input.variables;
        Promise.resolve(main(context, variables, __plugins)).then(
          (value) => {
            try { globalThis.__state = JSON.stringify({ returned: value === undefined ? null : value, variables, logs: __logs }); }
            catch (error) { globalThis.__state = { error: 'TypeError: variables and the return value must be JSON-serialisable (' + String(error) + ')' }; }
          },
          (error) => { globalThis.__state = { error: String(error) }; },
        );
      })();`;
    const started = evaluate(vm, driver, 'driver.js');
    if (!started.ok) return { id: job.id, ...classify(started.error, started.name, interrupted) };
    const jobs = runtime.executePendingJobs(-1);
    // A flood of self-scheduling microtasks ends by interrupt; whatever main returned, it overran.
    if (interrupted) return { id: job.id, ok: false, kind: 'timeout', error: 'the code ran past its time limit' };
    if (jobs.error) {
      const failure = vm.dump(jobs.error) as { message?: string; name?: string } | string;
      jobs.error.dispose();
      const message = typeof failure === 'string' ? failure : `${failure.name ?? 'Error'}: ${failure.message ?? ''}`;
      return { id: job.id, ...classify(message, typeof failure === 'string' ? undefined : failure.name, interrupted) };
    }
    const stateHandle = vm.getProp(vm.global, '__state');
    const state = vm.dump(stateHandle) as unknown;
    stateHandle.dispose();
    if (state === 'pending') {
      return { id: job.id, ok: false, kind: 'runtime', error: 'main returned a promise that never settled (no I/O exists in the sandbox to wait for)' };
    }
    if (typeof state === 'object' && state !== null && 'error' in state) {
      const message = String((state as { error: unknown }).error);
      return { id: job.id, ...classify(message, message.split(':')[0], interrupted) };
    }
    const parsed = JSON.parse(String(state)) as { returned: unknown; variables: Record<string, unknown>; logs: string[] };
    return { id: job.id, ok: true, returned: parsed.returned, variables: parsed.variables, logs: parsed.logs };
  } finally {
    vm.dispose();
    runtime.dispose();
  }
}

function evaluate(vm: QuickJSContext, code: string, filename: string): { ok: true } | { ok: false; error: string; name?: string } {
  const result = vm.evalCode(code, filename);
  if (result.error) {
    const dumped = vm.dump(result.error) as { name?: string; message?: string } | string;
    result.error.dispose();
    if (typeof dumped === 'string') return { ok: false, error: dumped };
    return { ok: false, error: `${dumped.name ?? 'Error'}: ${dumped.message ?? ''}`, name: dumped.name };
  }
  (result.value as QuickJSHandle).dispose();
  return { ok: true };
}

function classify(error: string, name: string | undefined, interrupted: boolean): Omit<Extract<SandboxReply, { ok: false }>, 'id'> {
  if (interrupted || /interrupted/i.test(error)) return { ok: false, kind: 'timeout', error: 'the code ran past its time limit' };
  if (/out of memory/i.test(error)) return { ok: false, kind: 'memory', error: 'the code exceeded its memory limit' };
  if (name === 'SyntaxError') return { ok: false, kind: 'syntax', error };
  if (/stack overflow/i.test(error)) return { ok: false, kind: 'runtime', error: 'stack overflow' };
  return { ok: false, kind: 'runtime', error };
}
