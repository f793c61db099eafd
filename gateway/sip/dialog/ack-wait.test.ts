import assert from 'node:assert/strict';
import { FakeClock } from '../../../core/clock.js';
import type { ServerRequest } from '../ua/server-request.js';
import { AckWait } from './ack-wait.js';

const T = { T1: 500, T2: 4000, T4: 5000 };

/** The parts of a ServerRequest an AckWait uses, recording when the 2xx was resent. */
function invite(clock: FakeClock, reliable: boolean): { sreq: ServerRequest; resent: number[] } {
  const resent: number[] = [];
  const sreq = { request: { cseq: { seq: 7 } }, flow: { reliable }, retransmitFinal: () => resent.push(clock.now()) };
  return { sreq: sreq as unknown as ServerRequest, resent };
}

describe('AckWait (RFC 3261 sec. 13.3.1.4)', () => {
  it('resends the 2xx at T1, 2*T1, 4*T1... capped at T2 and gives up at 64*T1', () => {
    const clock = new FakeClock(0);
    const { sreq, resent } = invite(clock, false);
    const timeouts: number[] = [];
    const wait = new AckWait({ ackTimeout: () => timeouts.push(clock.now()) }, sreq, clock, T);
    assert.equal(wait.seq, 7);
    clock.advance(64 * T.T1 - 1);
    assert.deepEqual(resent, [500, 1500, 3500, 7500, 11500, 15500, 19500, 23500, 27500, 31500]);
    assert.deepEqual(timeouts, []);
    clock.advance(1);
    assert.deepEqual(timeouts, [32_000]);
    clock.advance(60_000);
    assert.equal(resent.length, 10);
    assert.equal(clock.pendingCount, 0);
  });

  it('only gives up on a reliable transport', () => {
    const clock = new FakeClock(0);
    const { sreq, resent } = invite(clock, true);
    const timeouts: number[] = [];
    new AckWait({ ackTimeout: () => timeouts.push(clock.now()) }, sreq, clock, T);
    clock.advance(40_000);
    assert.deepEqual(resent, []);
    assert.deepEqual(timeouts, [32_000]);
  });

  it('stops for good when the ACK comes, also between retransmissions', () => {
    const clock = new FakeClock(0);
    const { sreq, resent } = invite(clock, false);
    const timeouts: number[] = [];
    const wait = new AckWait({ ackTimeout: () => timeouts.push(clock.now()) }, sreq, clock, T);
    clock.advance(2000);
    wait.stop();
    clock.advance(60_000);
    assert.deepEqual(resent, [500, 1500]);
    assert.deepEqual(timeouts, []);
  });
});
