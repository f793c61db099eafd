import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { PacingScheduler } from './pacing-scheduler.js';

describe('pacing scheduler', () => {
  it('ticks every 20 ms against the monotonic clock without drift, for all members at once', async () => {
    const scheduler = new PacingScheduler();
    const seen: Array<Array<{ tick: number; now: number }>> = [[], []];
    const members = seen.map((list) => ({ onTick: (tick: number, now: number) => list.push({ tick, now }) }));
    for (const m of members) scheduler.add(m);
    await new Promise((r) => setTimeout(r, 1000));
    for (const m of members) scheduler.delete(m);
    // Tied to the clock, not to how often the process got the CPU (with both cores busy a wake-up
    // can come late, and then skip): no tick runs before it is due, the last one that ran is the
    // last one due at that moment, and every tick between is either run or counted as skipped.
    const ticks = seen[0] ?? [];
    assert.ok(ticks.every(({ tick, now }) => scheduler.dueAt(tick) <= now), 'no tick ran early');
    const last = ticks.at(-1)!;
    assert.ok(scheduler.dueAt(last.tick) <= last.now && last.now < scheduler.dueAt(last.tick + 1), `tick ${last.tick} ran at ${(last.now - scheduler.dueAt(0)).toFixed(1)} ms`);
    assert.ok(ticks.every((t, i) => i === 0 || t.tick > (ticks[i - 1]?.tick ?? 0)));
    assert.equal(ticks.length + scheduler.stats.skippedTicks, last.tick, 'every tick ran or was counted as skipped');
    assert.ok(last.tick >= 40, `${last.tick} ticks due in about 1000 ms`);
    assert.deepEqual(seen[0], seen[1]);
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
