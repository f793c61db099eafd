import assert from 'node:assert/strict';
import { FakeClock } from '../../../core/clock.js';
import { silentLogger } from '../../../core/logger.js';
import type { InboundCallInfo } from '../../../core/ports/call-handler.js';
import { PacingScheduler } from '../../../media/rtp/pacing-scheduler.js';
import { StreamMediaSession, type StreamTransport } from '../../../media/stream/stream-media-session.js';
import { StreamCall, type AttachedStream } from './stream-call.js';

/** A stream that only records how it was closed. */
function stream(): AttachedStream & { closedWith: number | undefined } {
  const transport: StreamTransport = { sendAudio: () => undefined, sendMark: () => undefined, sendClear: () => undefined, flush: () => undefined };
  const s = { transport, closedWith: undefined as number | undefined, close: (code: number) => void (s.closedWith = code) };
  return s;
}

const minute = 60_000;

describe('StreamCall: the AI\'s limits during a provider transfer', () => {
  let clock: FakeClock;
  let scheduler: PacingScheduler;
  let call: StreamCall;
  let hangups: number;

  beforeEach(() => {
    clock = new FakeClock(Date.parse('2026-03-02T04:30:00Z'));
    scheduler = new PacingScheduler();
    hangups = 0;
    const info = { id: 'call-1', startedAt: clock.now() } as InboundCallInfo;
    const media = new StreamMediaSession(scheduler);
    call = new StreamCall(info, media, { maxDurationMs: 10 * minute, silenceMs: 2 * minute, reconnectGraceMs: 10_000 }, { hangup: async () => void hangups++ }, clock, silentLogger);
    call.streamStarted(stream());
  });
  afterEach(() => call.hangup());

  it('a transfer that releases the stream closes it with 1000 and leaves the call up, transferring', () => {
    const s = stream();
    call.streamStarted(s);
    call.beginTransfer();
    call.releaseStream('transfer');
    assert.equal(s.closedWith, 1000);
    assert.equal(call.state, 'transferring');
    assert.equal(call.signal.aborted, false);
  });

  it('max duration and End Call on Silence wait while the caller is with the target', () => {
    call.beginTransfer();
    call.releaseStream('transfer');
    clock.advance(30 * minute);
    assert.equal(call.state, 'transferring');
    assert.equal(hangups, 0);
  });

  it('the caller back after the max duration passed: the call ends at once (max-duration)', async () => {
    call.beginTransfer();
    call.releaseStream('transfer');
    clock.advance(11 * minute);
    call.endTransfer(false);
    assert.equal((await call.ended).reason, 'max-duration');
  });

  it('the caller back within the max duration: the silence limit starts over and ends the call when it passes', async () => {
    call.beginTransfer();
    call.releaseStream('transfer');
    clock.advance(3 * minute);
    call.endTransfer(false);
    call.streamStarted(stream());
    assert.equal(call.state, 'active');
    clock.advance(2 * minute - 1);
    assert.equal(hangups, 0);
    clock.advance(1);
    assert.equal((await call.ended).reason, 'caller-silence');
  });
});
