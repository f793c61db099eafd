import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { PacingScheduler } from './pacing-scheduler.js';

describe('pacing scheduler', () => {
  it('ticks every 20 ms against the monotonic clock without drift, for all members at once', async () => {
    const scheduler = new PacingScheduler();
    const seen: number[][] = [[], []];
    const start = performance.now();
    const members = seen.map((list) => ({ onTick: (tick: number) => list.push(tick) }));
    for (const m of members) scheduler.add(m);
    await new Promise((r) => setTimeout(r, 1000));
    const elapsed = performance.now() - start;
    for (const m of members) scheduler.delete(m);
    const expected = Math.floor(elapsed / 20);
    assert.ok(Math.abs((seen[0]?.length ?? 0) - expected) <= 1, `${seen[0]?.length} ticks in ${elapsed.toFixed(0)} ms`);
    assert.deepEqual(seen[0], seen[1]);
    assert.deepEqual(seen[0], seen[0]?.map((_, i) => i + 1));
  });

  it('catches up after a blocked event loop and counts what it skipped', async () => {
    const scheduler = new PacingScheduler({ maxCatchUpTicks: 3 });
    const ticks: number[] = [];
    const member = { onTick: (tick: number) => ticks.push(tick) };
    scheduler.add(member);
    await new Promise((r) => setTimeout(r, 50));
    const until = performance.now() + 200;
    while (performance.now() < until) {
      // block the loop for ~10 ticks
    }
    await new Promise((r) => setTimeout(r, 30));
    scheduler.delete(member);
    assert.ok(scheduler.stats.skippedTicks >= 5, `skipped ${scheduler.stats.skippedTicks}`);
    assert.ok(ticks.every((t, i) => i === 0 || t > (ticks[i - 1] ?? 0)));
    assert.equal(scheduler.size, 0);
  });
});
