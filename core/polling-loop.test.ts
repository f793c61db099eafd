import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { FakeClock } from './clock.js';
import type { Logger } from './logger.js';
import { PollingLoop, type RoundResult } from './polling-loop.js';

/** Lets the loop's awaited promises run (the clock only fires timers). */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function capturingLogger(): { logger: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino<never>({ level: 'info' }, sink), lines };
}

describe('PollingLoop', () => {
  it('runs a round at start, pauses intervalMs after an idle round and none after a full one', async () => {
    const clock = new FakeClock(0);
    const at: number[] = [];
    const results: RoundResult[] = ['more', 'more', 'idle', 'idle'];
    const round = async (): Promise<RoundResult> => {
      at.push(clock.now());
      return results.shift() ?? 'idle';
    };
    const loop = new PollingLoop({ name: 't', clock, logger: pino({ level: 'silent' }), intervalMs: 500, round });
    loop.start();
    clock.advance(0);
    await settle();
    // Two 'more' rounds chain into a third without a pause; the idle third pauses 500 ms.
    assert.deepEqual(at, [0, 0, 0]);
    clock.advance(499);
    await settle();
    assert.equal(at.length, 3);
    clock.advance(1);
    await settle();
    assert.deepEqual(at, [0, 0, 0, 500]);
    await loop.stop();
  });

  it('backs off exponentially after failures (capped), logs each, and returns to the interval after a success', async () => {
    const clock = new FakeClock(0);
    const { logger, lines } = capturingLogger();
    const at: number[] = [];
    const ended: number[] = [];
    let failuresLeft = 4;
    const loop = new PollingLoop({
      name: 'poller',
      clock,
      logger,
      intervalMs: 100,
      maxBackoffMs: 300,
      round: async () => {
        at.push(clock.now());
        // The test advances the clock in steps while a round runs; pauses count from its end.
        await settle();
        ended.push(clock.now());
        if (failuresLeft-- > 0) throw new Error('database down');
      },
    });
    loop.start();
    for (let i = 0; i < 60; i++) {
      clock.advance(50);
      await settle();
    }
    // Pauses after rounds 1-4 (failed): 100, 200, 300 (capped), 300; after round 5 (success): 100.
    const pauses = at.slice(1, 7).map((start, i) => start - ended[i]!);
    assert.deepEqual(pauses, [100, 200, 300, 300, 100, 100]);
    assert.equal(loop.failureCount, 0);
    const errors = lines.filter((l) => l.msg === 'poller round failed');
    assert.deepEqual(errors.map((l) => l.retryInMs), [100, 200, 300, 300]);
    assert.equal((errors[0]?.err as { message?: string } | undefined)?.message, 'database down');
    await loop.stop();
  });

  it('wake() while paused runs a round now; during a round it runs another right after', async () => {
    const clock = new FakeClock(0);
    let release: (() => void) | undefined;
    let rounds = 0;
    const loop = new PollingLoop({
      name: 't',
      clock,
      logger: pino({ level: 'silent' }),
      intervalMs: 10_000,
      round: async () => {
        rounds += 1;
        if (rounds === 2) await new Promise<void>((resolve) => (release = resolve));
      },
    });
    loop.start();
    clock.advance(0);
    await settle();
    assert.equal(rounds, 1);
    loop.wake();
    clock.advance(0);
    await settle();
    assert.equal(rounds, 2);
    // Woken while round 2 is still running: round 3 follows it without waiting 10 s.
    loop.wake();
    release?.();
    await settle();
    assert.equal(rounds, 3);
    await settle();
    assert.equal(rounds, 3, 'no further round until the interval');
    await loop.stop();
  });

  it('stop() waits for the round in progress and no round runs afterwards', async () => {
    const clock = new FakeClock(0);
    let release: (() => void) | undefined;
    let finished = false;
    let rounds = 0;
    const loop = new PollingLoop({
      name: 't',
      clock,
      logger: pino({ level: 'silent' }),
      intervalMs: 100,
      round: async () => {
        rounds += 1;
        await new Promise<void>((resolve) => (release = resolve));
        finished = true;
        return 'more';
      },
    });
    loop.start();
    clock.advance(0);
    await settle();
    const stopped = loop.stop();
    let stopResolved = false;
    void stopped.then(() => (stopResolved = true));
    await settle();
    assert.equal(stopResolved, false, 'stop waits for the running round');
    release?.();
    await stopped;
    assert.equal(finished, true);
    clock.advance(1_000);
    loop.wake();
    clock.advance(1_000);
    await settle();
    assert.equal(rounds, 1);
    assert.equal(loop.active, false);
  });
});
