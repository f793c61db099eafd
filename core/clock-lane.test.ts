import assert from 'node:assert/strict';
import { FakeClock } from './clock.js';
import { TimerLane, timerLane, type LaneEntry } from './clock-lane.js';

/** An entry that records when it expired. */
function entry(clock: FakeClock, log: string[], name: string, then?: () => void): LaneEntry {
  return {
    expire: () => {
      log.push(`${name}@${clock.now()}`);
      then?.();
    },
  };
}

describe('TimerLane', () => {
  it('expires each entry exactly its duration after it was added, in order, on one clock timer', () => {
    const clock = new FakeClock(0);
    const lane = new TimerLane(clock, 1000);
    const log: string[] = [];
    lane.add(entry(clock, log, 'a'));
    clock.advance(10);
    lane.add(entry(clock, log, 'b'));
    lane.add(entry(clock, log, 'c'));
    assert.equal(clock.pendingCount, 1);
    assert.equal(lane.size, 3);
    clock.advance(989);
    assert.deepEqual(log, []);
    clock.advance(1);
    assert.deepEqual(log, ['a@1000']);
    clock.advance(10);
    assert.deepEqual(log, ['a@1000', 'b@1010', 'c@1010']);
    assert.equal(lane.size, 0);
    assert.equal(clock.pendingCount, 0);
  });

  it('cancels by ticket; a cancelled head does not hold back the next entry, and stale tickets are ignored', () => {
    const clock = new FakeClock(0);
    const lane = new TimerLane(clock, 500);
    const log: string[] = [];
    const a = lane.add(entry(clock, log, 'a'));
    clock.advance(100);
    lane.add(entry(clock, log, 'b'));
    lane.cancel(a);
    lane.cancel(a);
    assert.equal(lane.size, 1);
    clock.advance(500);
    assert.deepEqual(log, ['b@600']);
    lane.cancel(a);
    const c = lane.add(entry(clock, log, 'c'));
    lane.cancel(c);
    clock.advance(1000);
    assert.deepEqual(log, ['b@600']);
    assert.equal(clock.pendingCount, 0, 'an empty lane keeps no clock timer');
  });

  it('with slack, expires entries due close together in one wake-up, never early', () => {
    const clock = new FakeClock(0);
    const lane = new TimerLane(clock, 1000, 100);
    const log: string[] = [];
    for (let t = 0; t < 100; t += 10) {
      lane.add(entry(clock, log, `e${t}`));
      clock.advance(10);
    }
    clock.advance(899);
    assert.equal(log.length, 0, 'nothing fires before its deadline');
    clock.advance(1);
    assert.equal(log.length, 0, 'the first entry waits for the slack');
    clock.advance(100);
    assert.equal(log.length, 10, 'all ten expire in the wake-up at 1100');
    assert.ok(log.every((l) => l.endsWith('@1100')));
  });

  it('lets an expiring entry add to the same lane and keeps the order', () => {
    const clock = new FakeClock(0);
    const lane = new TimerLane(clock, 100);
    const log: string[] = [];
    lane.add(entry(clock, log, 'first', () => lane.add(entry(clock, log, 'again'))));
    clock.advance(50);
    lane.add(entry(clock, log, 'second'));
    clock.advance(250);
    assert.deepEqual(log, ['first@100', 'second@150', 'again@200']);
  });

  it('treats entries as due when the clock was set back (no stall)', () => {
    let now = 10_000;
    const timers: Array<() => void> = [];
    const clock = {
      now: () => now,
      setTimeout: (cb: () => void) => ({ id: timers.push(cb) }),
      clearTimeout: () => undefined,
    };
    const lane = new TimerLane(clock, 1000);
    const log: string[] = [];
    lane.add({ expire: () => log.push('x') });
    now = 5_000;
    timers.shift()?.();
    assert.deepEqual(log, ['x']);
  });

  it('keeps tickets valid across compaction of many expired slots', () => {
    const clock = new FakeClock(0);
    const lane = new TimerLane(clock, 10);
    const log: string[] = [];
    for (let i = 0; i < 3000; i++) lane.add(entry(clock, log, 'old'));
    clock.advance(5);
    const keep = lane.add(entry(clock, log, 'keep'));
    const drop = lane.add(entry(clock, log, 'drop'));
    clock.advance(5);
    assert.equal(log.length, 3000);
    lane.cancel(drop);
    clock.advance(5);
    assert.deepEqual(log.slice(3000), ['keep@15']);
    lane.cancel(keep);
    assert.equal(lane.size, 0);
  });

  it('is shared per clock, duration and slack', () => {
    const clock = new FakeClock(0);
    assert.equal(timerLane(clock, 500), timerLane(clock, 500));
    assert.notEqual(timerLane(clock, 500), timerLane(clock, 500, 20));
    assert.notEqual(timerLane(clock, 500), timerLane(new FakeClock(0), 500));
  });
});
