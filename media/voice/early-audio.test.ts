import assert from 'node:assert/strict';
import type { AudioFrame } from '../../core/ports/media.js';
import { FrameQueue } from '../session/frame-queue.js';
import { EarlyAudio } from './early-audio.js';

const frame = (n: number): AudioFrame => ({ samples: Int16Array.of(n), concealed: false });
const settle = (): Promise<void> => new Promise((r) => setImmediate(r));

async function take(reader: AsyncIterator<AudioFrame>, count: number): Promise<number[]> {
  const got: number[] = [];
  for (let i = 0; i < count; i++) {
    const next = await reader.next();
    if (next.done) break;
    got.push(next.value.samples[0]!);
  }
  return got;
}

describe('EarlyAudio: the caller audio from answer until the ear listens', () => {
  it('hands the frames heard before the reader came, in order, then the live ones', async () => {
    const input = new FrameQueue();
    const early = new EarlyAudio(input);
    for (let n = 1; n <= 3; n++) input.push(frame(n));
    await settle();
    const reader = early.reader();
    assert.deepEqual(await take(reader, 3), [1, 2, 3]);
    const live = take(reader, 2);
    input.push(frame(4));
    input.push(frame(5));
    assert.deepEqual(await live, [4, 5]);
  });

  it('keeps at most maxFrames: the oldest go, and are counted', async () => {
    const input = new FrameQueue(1000);
    const early = new EarlyAudio(input, 4);
    for (let n = 1; n <= 6; n++) input.push(frame(n));
    await settle();
    assert.equal(early.dropped, 2);
    assert.deepEqual(await take(early.reader(), 4), [3, 4, 5, 6]);
  });

  it('ends after the kept frames when the call ends, and has one reader only', async () => {
    const input = new FrameQueue();
    const early = new EarlyAudio(input);
    input.push(frame(1));
    await settle();
    input.end();
    await settle();
    const reader = early.reader();
    assert.throws(() => early.reader(), /one reader/);
    assert.deepEqual(await take(reader, 5), [1]);
    assert.equal((await reader.next()).done, true);
  });

  it('stop() (no conversation will listen) lets go of the session input', async () => {
    const input = new FrameQueue();
    const early = new EarlyAudio(input);
    await settle();
    assert.equal(input.readerCount, 1);
    early.stop();
    await settle();
    assert.equal(input.readerCount, 0);
    assert.equal((await early.reader().next()).done, true);
  });

  it("a reader's return() (the ear stops at a hand-over) stops the reading too", async () => {
    const input = new FrameQueue();
    const early = new EarlyAudio(input);
    const reader = early.reader();
    await reader.return?.();
    await settle();
    assert.equal(input.readerCount, 0);
  });

  it('passes a failing input on after the frames that came before it', async () => {
    let calls = 0;
    const failing: AsyncIterable<AudioFrame> = {
      [Symbol.asyncIterator]: () => ({
        next: async () => {
          calls += 1;
          if (calls === 1) return { value: frame(7), done: false };
          throw new Error('socket closed');
        },
      }),
    };
    const reader = new EarlyAudio(failing).reader();
    assert.deepEqual(await take(reader, 1), [7]);
    await assert.rejects(reader.next(), /socket closed/);
  });
});
