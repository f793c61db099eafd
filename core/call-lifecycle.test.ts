import assert from 'node:assert/strict';
import { CallLifecycle } from './call-lifecycle.js';
import { FakeClock } from './clock.js';
import { TypedEmitter } from './typed-emitter.js';
import type { MediaSessionEvents } from './ports/media.js';

/** The smallest call: it records the limits it reached and the media timeouts it was told of. */
class TestCall extends CallLifecycle {
  readonly reached: string[] = [];
  constructor(clock: FakeClock, limits: { maxDurationMs: number; silenceMs: number }, media: TypedEmitter<MediaSessionEvents>) {
    super(clock, limits);
    this.startLifecycle(media, 'rtp', (silentMs) => this.reached.push(`media-timeout ${silentMs}`));
  }
  protected limitReached(reason: 'max-duration' | 'caller-silence'): void {
    this.reached.push(reason);
  }
  end(reason: string): void {
    this.endLifecycle(reason);
  }
}

describe('CallLifecycle: the timers, signal and media events every call shares', () => {
  it('reaches End Call on Silence unless speech restarts it, and the max duration regardless', () => {
    const clock = new FakeClock();
    const call = new TestCall(clock, { maxDurationMs: 5_000, silenceMs: 1_000 }, new TypedEmitter<MediaSessionEvents>());
    clock.advance(900);
    call.noteCallerSpeech();
    clock.advance(900);
    assert.deepEqual(call.reached, []);
    clock.advance(100);
    assert.deepEqual(call.reached, ['caller-silence']);
    clock.advance(3_100);
    assert.deepEqual(call.reached, ['caller-silence', 'max-duration']);
  });

  it('hands keys on with their path and media silence to the call; after the end nothing fires', () => {
    const clock = new FakeClock();
    const media = new TypedEmitter<MediaSessionEvents>();
    const call = new TestCall(clock, { maxDurationMs: 5_000, silenceMs: 0 }, media);
    const keys: string[] = [];
    call.on('dtmf', (e) => keys.push(`${e.digit}/${e.via}`));
    media.emit('dtmf', { digit: '5', durationMs: 100, endSeen: true });
    media.emit('timeout', { silentMs: 3_000, onHold: false });
    let fired = false;
    call.after(500, () => (fired = true));
    call.end('remote-bye');
    media.emit('dtmf', { digit: '6', durationMs: 100, endSeen: true });
    media.emit('timeout', { silentMs: 6_000, onHold: false });
    clock.advance(10_000);
    assert.deepEqual(keys, ['5/rtp']);
    assert.deepEqual(call.reached, ['media-timeout 3000']);
    assert.equal(fired, false);
    assert.match((call.signal.reason as Error).message, /call ended: remote-bye/);
  });
});
