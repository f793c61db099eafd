import assert from 'node:assert/strict';
import { FakeClock } from './clock.js';

describe('FakeClock', () => {
  it('fires timers in due order, including ones scheduled while advancing', () => {
    const clock = new FakeClock(1000);
    const fired: string[] = [];
    clock.setTimeout(() => fired.push('b@300'), 300);
    clock.setTimeout(() => {
      fired.push('a@100');
      clock.setTimeout(() => fired.push('c@150'), 50);
    }, 100);
    const cancelled = clock.setTimeout(() => fired.push('never'), 200);
    clock.clearTimeout(cancelled);
    clock.advance(250);
    assert.deepEqual(fired, ['a@100', 'c@150']);
    assert.equal(clock.now(), 1250);
    clock.advance(100);
    assert.deepEqual(fired, ['a@100', 'c@150', 'b@300']);
    assert.equal(clock.pendingCount, 0);
  });
});
