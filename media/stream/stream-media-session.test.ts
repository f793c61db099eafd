import assert from 'node:assert/strict';
import { PacingScheduler } from '../rtp/pacing-scheduler.js';
import { StreamMediaSession, type StreamTransport } from './stream-media-session.js';

/**
 * What a provider connection was asked to send, with when (ms since the test began) and how many
 * ticks of the session's clock had run by then.
 */
class SentLog implements StreamTransport {
  readonly frames: { at: number; tick: number; frame: Int16Array }[] = [];
  readonly marks: string[] = [];
  clears = 0;
  flushes = 0;
  private readonly t0 = performance.now();
  constructor(private readonly ticks: () => number) {}
  sendAudio(frame: Int16Array): void {
    this.frames.push({ at: performance.now() - this.t0, tick: this.ticks(), frame });
  }
  sendMark(name: string): void {
    this.marks.push(name);
  }
  sendClear(): void {
    this.clears++;
  }
  flush(): void {
    this.flushes++;
  }
}

const ramp = (n: number, from = 0): Int16Array => Int16Array.from({ length: n }, (_, i) => (from + i) % 30_000);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until(check: () => boolean, ms = 3_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(5);
  }
}

describe('StreamMediaSession: a call\'s audio over a provider media stream', () => {
  let scheduler: PacingScheduler;
  let session: StreamMediaSession;
  let sent: SentLog;
  beforeEach(() => {
    scheduler = new PacingScheduler();
    session = new StreamMediaSession(scheduler, { leadMs: 100, markEveryFrames: 10 });
    sent = new SentLog(() => scheduler.stats.ticks);
    session.attach(sent);
  });
  afterEach(() => session.close());

  it('cuts caller chunks of any length (100 ms, 7 ms, 1 sample) into exact 20 ms frames, in order', async () => {
    const reader = session.input[Symbol.asyncIterator]();
    const audio = ramp(160 * 9);
    session.receiveAudio(audio.subarray(0, 800));
    for (let i = 800; i < 1400; i += 56) session.receiveAudio(audio.subarray(i, Math.min(1400, i + 56)));
    for (let i = 1400; i < audio.length; i++) session.receiveAudio(audio.subarray(i, i + 1));
    const got: number[] = [];
    for (let n = 0; n < 9; n++) {
      const { value } = await reader.next();
      assert.equal(value!.samples.length, 160);
      assert.equal(value!.concealed, false);
      got.push(...value!.samples);
    }
    assert.deepEqual(got, [...audio]);
  });

  it('sends agent audio paced on the 20 ms clock, at most the lead ahead, with marks, and resolves play when all is sent', async () => {
    const start = performance.now();
    const ticksAtPlay = scheduler.stats.ticks;
    const outcome = await session.output.play([ramp(8000)]);
    assert.equal(outcome, 'completed');
    assert.equal(sent.frames.length, 50);
    assert.deepEqual(sent.frames.flatMap((f) => [...f.frame]), [...ramp(8000)]);
    // 1 s of audio with a 100 ms lead: play ends after ~0.9 s, never much earlier.
    assert.ok(performance.now() - start >= 800, `play took ${performance.now() - start} ms`);
    // The first frames leave at once (the lead), before the next tick; counted in ticks, not ms,
    // as a loaded machine may pause the process between two sends.
    assert.deepEqual(sent.frames.slice(0, 5).map((f) => f.tick), Array(5).fill(ticksAtPlay), JSON.stringify(sent.frames.slice(0, 6).map((f) => [f.at, f.tick])));
    assert.ok(sent.frames[5]!.tick > ticksAtPlay, 'the sixth frame waits for the clock');
    await until(() => sent.flushes === 1);
    assert.deepEqual(sent.marks, ['vap-10', 'vap-20', 'vap-30', 'vap-40', 'vap-50']);
  });

  it('barge-in: clear() drops our queue, tells the provider to drop its buffer, and queuedMs counted what it held', async () => {
    const playing = session.output.play([ramp(16_000)]);
    await until(() => sent.frames.length >= 10);
    // What the caller has not heard: our queue plus about the lead in the provider's buffer.
    const unheard = session.output.queuedMs;
    assert.ok(unheard > 1_750 && unheard <= 1_900, `queued ${unheard} ms`);
    session.output.clear();
    assert.equal(await playing, 'interrupted');
    assert.equal(sent.clears, 1);
    assert.equal(session.output.queuedMs, 0);
    const after = sent.frames.length;
    await sleep(100);
    assert.equal(sent.frames.length, after, 'no agent audio after the clear');
    // Echoes of marks the clear dropped do not count as played audio.
    session.receiveMark('vap-10');
    assert.equal(session.output.queuedMs, 0);
  });

  it('a mark the provider echoes sets how much it still holds', async () => {
    const playing = session.output.play([ramp(4_000)]);
    await until(() => sent.marks.length >= 1);
    session.receiveMark('vap-10');
    const held = session.output.queuedMs;
    assert.ok(held >= 0 && held <= 4_000 / 8, `held ${held}`);
    session.receiveMark('not-ours');
    assert.equal(await playing, 'completed');
  });

  it('reports DTMF from the provider as media dtmf events', () => {
    const keys: string[] = [];
    session.on('dtmf', (e) => keys.push(e.digit));
    session.receiveDtmf('5');
    session.receiveDtmf('#');
    assert.deepEqual(keys, ['5', '#']);
  });

  it('a detached stream holds agent audio in our queue; a new stream gets it', async () => {
    session.detach();
    const playing = session.output.play([ramp(1_600)]);
    await sleep(120);
    assert.equal(sent.frames.length, 0);
    const second = new SentLog(() => scheduler.stats.ticks);
    session.attach(second);
    assert.equal(await playing, 'completed');
    assert.equal(second.frames.length, 10);
  });

  it('emits timeout once when the provider sends no caller audio for the media timeout', async () => {
    await session.close();
    session = new StreamMediaSession(scheduler, { mediaTimeoutMs: 150 });
    session.attach(sent);
    let timeouts = 0;
    session.on('timeout', () => timeouts++);
    await until(() => timeouts === 1);
    await sleep(100);
    assert.equal(timeouts, 1);
    session.receiveAudio(ramp(160));
    await until(() => timeouts === 2);
  });

  it('refuses SDP renegotiation and outgoing DTMF with a reason', async () => {
    assert.equal(session.update().ok, false);
    await assert.rejects(session.sendDtmf(), /cannot send DTMF/);
  });
});
