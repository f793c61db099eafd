import assert from 'node:assert/strict';
import { LoopLagMonitor } from './loop-lag.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('LoopLagMonitor: the mean delay an event meets on this event loop', () => {
  it('reads a blocked loop as lagging, however few late samples that left, and forgets it after the window', async function () {
    this.timeout(60_000);
    const monitor = new LoopLagMonitor(20, 1000).start();
    try {
      await sleep(100);
      // Block the loop 400 ms: the timer due within it fires at least 380 ms late, an event arriving
      // meanwhile waited 190 ms on average, and the block is 40% of the window: >= 72 ms.
      const until = Date.now() + 400;
      while (Date.now() < until) {
        // busy
      }
      await sleep(30);
      assert.ok(monitor.lagMs() > 50, `lag ${monitor.lagMs()} ms right after a 400 ms block`);
      const deadline = Date.now() + 30_000;
      while (monitor.lagMs() >= 50) {
        assert.ok(Date.now() < deadline, `still ${monitor.lagMs()} ms 30 s after the block`);
        await sleep(100);
      }
    } finally {
      monitor.stop();
    }
  });

  it('is 0 before any sample and never keeps the process alive', () => {
    const monitor = new LoopLagMonitor().start();
    assert.equal(monitor.lagMs(), 0);
    monitor.stop();
  });
});
