import assert from 'node:assert/strict';
import { AdaptiveDelay } from './adaptive-delay.js';

/** Feeds `n` packets of 20 ms whose arrival deviates from the schedule by `offset(i)` ms. */
function feed(delay: AdaptiveDelay, n: number, offset: (i: number) => number): void {
  for (let i = 0; i < n; i++) delay.onArrival(i * 20 + offset(i), i * 160);
}

describe('adaptive receive delay (RFC 3550 interarrival jitter)', () => {
  it('uses the configured initial wait until the line has been measured', () => {
    const delay = new AdaptiveDelay({ initialMs: 60, warmupPackets: 50 });
    feed(delay, 20, () => 0);
    assert.equal(delay.targetMs, 60);
  });

  it('settles at its small floor on a steady line', () => {
    const delay = new AdaptiveDelay({ initialMs: 60, floorMs: 10 });
    feed(delay, 200, () => 0);
    assert.equal(delay.jitterMs, 0);
    assert.equal(delay.targetMs, 10);
  });

  it('follows the measured jitter: J converges to the mean |D| and the wait is 3 J', () => {
    const delay = new AdaptiveDelay({ floorMs: 10, maxMs: 500 });
    // Every other packet 8 ms late: |D| = 8 between every pair.
    feed(delay, 400, (i) => (i % 2) * 8);
    assert.ok(Math.abs(delay.jitterMs - 8) < 0.1, `J ${delay.jitterMs}`);
    assert.ok(Math.abs(delay.targetMs - 24) < 0.5, `target ${delay.targetMs}`);
  });

  it('is not fooled by the 32-bit timestamp wrap', () => {
    const delay = new AdaptiveDelay();
    for (let i = 0; i < 100; i++) delay.onArrival(i * 20, (2 ** 32 - 50 * 160 + i * 160) >>> 0);
    assert.equal(delay.jitterMs, 0);
  });

  it('grows by a packet time on each late packet and shrinks only during silence', () => {
    const delay = new AdaptiveDelay({ floorMs: 10, maxMs: 200 });
    feed(delay, 100, () => 0);
    delay.onLate();
    delay.onLate();
    assert.equal(delay.targetMs, 40);
    delay.onSilence(200);
    assert.equal(delay.targetMs, 30, '10 ms less after 200 ms of silence');
    delay.onSilence(10_000);
    assert.equal(delay.targetMs, 10);
  });

  it('never waits longer than its maximum', () => {
    const delay = new AdaptiveDelay({ maxMs: 100 });
    feed(delay, 100, () => 0);
    for (let i = 0; i < 20; i++) delay.onLate();
    assert.equal(delay.targetMs, 100);
  });
});
