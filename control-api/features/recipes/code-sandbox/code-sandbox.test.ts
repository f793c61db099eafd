import assert from 'node:assert/strict';
import type { CodeRunResult } from '../runtime/services.js';
import { QuickJsCodeRunner } from './quickjs-code-runner.js';

describe('Code block sandbox (QuickJS in a worker)', function () {
  this.timeout(30_000);
  let runner: QuickJsCodeRunner;
  before(() => {
    runner = new QuickJsCodeRunner({ workers: 2, memoryLimitBytes: 16 * 1024 * 1024, killGraceMs: 800 });
  });
  after(() => runner.close());

  const run = (source: string, options: { timeoutMs?: number; variables?: Record<string, unknown>; signal?: AbortSignal } = {}): Promise<CodeRunResult> =>
    runner.run({
      source,
      context: { callerNumber: '+919800000001', tenantId: 't1' },
      variables: options.variables ?? {},
      timeoutMs: options.timeoutMs ?? 1000,
      signal: options.signal ?? new AbortController().signal,
      now: Date.UTC(2026, 10, 21, 9),
      today: '2026-11-21',
    });
  const failure = (result: CodeRunResult): string => (result.ok ? 'ok' : result.kind);

  describe('main(context, variables, plugins)', () => {
    it('reads the run clock, never the host clock (Date.now, new Date, plugins.date)', async () => {
      const result = await run(
        `function main(context, variables, plugins) {
           variables.now = Date.now();
           variables.iso = new Date().toISOString();
           variables.parsed = new Date('2020-01-02T00:00:00Z').getTime();
           variables.isDate = new Date() instanceof Date;
           variables.today = plugins.date.today();
         }`,
      );
      assert.ok(result.ok);
      assert.deepEqual(result.variables, {
        now: Date.UTC(2026, 10, 21, 9),
        iso: '2026-11-21T09:00:00.000Z',
        parsed: Date.UTC(2020, 0, 2),
        isDate: true,
        today: '2026-11-21',
      });
    });

    it('reads context, writes variables and returns a value', async () => {
      const result = await run(
        `function main(context, variables, plugins) {
           variables.due = plugins.date.addDays(plugins.date.today(), 7);
           variables.masked = plugins.text.maskLast(context.callerNumber, 4);
           variables.total = variables.principal * 2;
           plugins.log('computed', variables.total);
           return 'done';
         }`,
        { variables: { principal: 1000 } },
      );
      assert.ok(result.ok);
      assert.deepEqual(result.variables, { principal: 1000, due: '2026-11-28', masked: '*********0001', total: 2000 });
      assert.equal(result.returned, 'done');
      assert.deepEqual(result.logs, ['computed 2000']);
    });

    it('awaits an async main', async () => {
      const result = await run('async function main(c, v) { v.a = await Promise.resolve(41) + 1; }');
      assert.ok(result.ok);
      assert.deepEqual(result.variables, { a: 42 });
    });

    it('reports a syntax error as syntax, a throw as runtime', async () => {
      assert.equal(failure(await run('function main( {')), 'syntax');
      const thrown = await run('function main() { throw new Error("no balance field") }');
      assert.equal(failure(thrown), 'runtime');
      assert.ok(!thrown.ok && thrown.error.includes('no balance field'));
      assert.equal(failure(await run('const x = 1;')), 'runtime');
    });
  });

  describe('escape attempts are contained', () => {
    it('has no process, require, fetch, network or filesystem globals', async () => {
      const result = await run(
        `function main(c, v) {
           v.kinds = [typeof process, typeof require, typeof fetch, typeof XMLHttpRequest, typeof WebSocket,
                      typeof std, typeof os, typeof Deno, typeof Bun, typeof module, typeof global].join(',');
         }`,
      );
      assert.ok(result.ok);
      assert.equal(result.variables.kinds, Array(11).fill('undefined').join(','));
    });

    it('cannot reach the host through constructor chains', async () => {
      const result = await run(
        `function main(c, v) {
           const g = (function(){}).constructor('return this')();
           v.sameGlobal = g === globalThis;
           v.viaContext = c.constructor.constructor('return typeof process')();
           try { c.constructor.constructor('return process')(); v.leak = true } catch (e) { v.error = e.name }
         }`,
      );
      assert.ok(result.ok);
      assert.deepEqual(result.variables, { sameGlobal: true, viaContext: 'undefined', error: 'ReferenceError' });
    });

    it('cannot import modules', async () => {
      const result = await run('async function main(c, v) { await import("fs") }');
      assert.equal(failure(result), 'runtime');
    });

    it('prototype pollution stays inside one run and never reaches the host', async () => {
      const polluted = await run('function main(c, v) { Object.prototype.pwned = 1; Array.prototype.push = null; v.ok = ({}).pwned }');
      assert.ok(polluted.ok);
      assert.equal(polluted.variables.ok, 1);
      assert.equal((({}) as Record<string, unknown>).pwned, undefined);
      const next = await run('function main(c, v) { v.seen = ({}).pwned === undefined && typeof [].push === "function" }');
      assert.ok(next.ok);
      assert.equal(next.variables.seen, true);
    });

    it('stops an infinite loop at its time limit while the host event loop stays free', async () => {
      let ticks = 0;
      const ticker = setInterval(() => ticks++, 20);
      const started = Date.now();
      const result = await run('function main() { for (;;) {} }', { timeoutMs: 300 });
      clearInterval(ticker);
      assert.equal(failure(result), 'timeout');
      assert.ok(Date.now() - started < 1500, `took ${Date.now() - started} ms`);
      assert.ok(ticks >= 5, 'host timers kept firing');
    });

    it('stops memory bombs (allocation, string doubling, array growth) and recovers', async () => {
      for (const source of [
        'function main() { return new ArrayBuffer(1e9).byteLength }',
        'function main() { let s = "x"; for (;;) s += s }',
        'function main() { const a = []; for (;;) a.push("x".repeat(1e5) + Math.random()) }',
      ]) {
        const started = Date.now();
        const result = await run(source, { timeoutMs: 500 });
        assert.ok(!result.ok, source);
        assert.ok(['memory', 'timeout', 'runtime'].includes(failure(result)), source);
        assert.ok(Date.now() - started < 3000, `${source} took ${Date.now() - started} ms`);
      }
      const after = await run('function main(c, v) { v.alive = true }');
      assert.ok(after.ok);
    });

    it('fails fast on a never-resolving promise and times out a microtask flood', async () => {
      const started = Date.now();
      assert.equal(failure(await run('function main() { return new Promise(() => {}) }')), 'runtime');
      assert.ok(Date.now() - started < 1000);
      assert.equal(failure(await run('function main() { (function f() { Promise.resolve().then(f) })(); }', { timeoutMs: 300 })), 'timeout');
    });

    it('turns unbounded recursion into a runtime failure', async () => {
      assert.equal(failure(await run('function main() { return (function f() { return f() + 1 })() }')), 'runtime');
    });

    it('rejects values that cannot leave the sandbox as JSON', async () => {
      assert.equal(failure(await run('function main(c, v) { v.self = v }')), 'runtime');
    });

    it('is cancelled at once when the call hangs up', async () => {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 100);
      const started = Date.now();
      const result = await run('function main() { for (;;) {} }', { timeoutMs: 5000, signal: controller.signal });
      assert.equal(failure(result), 'cancelled');
      assert.ok(Date.now() - started < 1000);
    });
  });
});
