import assert from 'node:assert/strict';
import { FakeClock } from '../../core/clock.js';
import { CallCapacity, capacityReasons } from './call-capacity.js';

describe('CallCapacity: room for a new call on every signal', () => {
  it('has room without limits, whatever the signals say', () => {
    const c = new CallCapacity({ clock: new FakeClock(0), callsInProgress: () => 10_000, loopLagMs: () => 5_000, recogniserQueueDepth: () => 1_000 });
    assert.equal(c.room(), undefined);
  });

  it('refuses at maxCalls calls in progress (waiting INVITEs included by the caller) and has room again below', () => {
    let n = 3;
    const c = new CallCapacity({ clock: new FakeClock(0), maxCalls: 3, callsInProgress: () => n });
    assert.equal(c.room(), capacityReasons.calls);
    n = 2;
    assert.equal(c.room(), undefined);
  });

  it('takes maxCallsPerSecond new calls a second, with a burst of the same, refilled on the clock', () => {
    const clock = new FakeClock(0);
    const c = new CallCapacity({ clock, maxCallsPerSecond: 4, callsInProgress: () => 0 });
    const take = (): string | undefined => {
      const why = c.room();
      if (why === undefined) c.take();
      return why;
    };
    assert.deepEqual([take(), take(), take(), take(), take()], [undefined, undefined, undefined, undefined, capacityReasons.rate]);
    clock.advance(250);
    assert.deepEqual([take(), take()], [undefined, capacityReasons.rate], 'a quarter second: one call');
    clock.advance(10_000);
    assert.deepEqual([take(), take(), take(), take(), take()], [undefined, undefined, undefined, undefined, capacityReasons.rate], 'the burst never exceeds the rate');
  });

  it('judges the event loop only while a call is in progress: the first call is always taken', () => {
    let calls = 0;
    let lag = 500;
    const c = new CallCapacity({ clock: new FakeClock(0), maxEventLoopLagMs: 50, loopLagMs: () => lag, callsInProgress: () => calls });
    assert.equal(c.room(), undefined, 'nobody to suffer from one more call');
    calls = 1;
    assert.equal(c.room(), capacityReasons.lag);
    lag = 50;
    assert.equal(c.room(), undefined, 'at the limit is still room');
  });

  it('refuses while the recogniser queue is deeper than allowed, and ignores the limit without the hook', () => {
    let depth = 9;
    const hooked = new CallCapacity({ clock: new FakeClock(0), maxRecogniserQueue: 8, recogniserQueueDepth: () => depth, callsInProgress: () => 0 });
    assert.equal(hooked.room(), capacityReasons.recogniser);
    depth = 8;
    assert.equal(hooked.room(), undefined);
    const unhooked = new CallCapacity({ clock: new FakeClock(0), maxRecogniserQueue: 0, callsInProgress: () => 0 });
    assert.equal(unhooked.room(), undefined);
  });
});
