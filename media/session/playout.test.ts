import assert from 'node:assert/strict';
import type { AudioFrame } from '../../core/ports/media.js';
import { pcmu } from '../codecs/g711.js';
import { createCodec } from '../codecs/audio-codec.js';
import { AdaptiveDelay } from '../rtp/adaptive-delay.js';
import { JitterBuffer } from '../rtp/jitter-buffer.js';

const pcmuCodec = createCodec('PCMU');
import { Playout } from './playout.js';

/** A packet of `samples` samples at a constant level (exact through mu-law for these levels). */
function packet(samples: number, level: number): Buffer {
  const out = Buffer.alloc(samples);
  pcmu.encode(new Int16Array(samples).fill(level), out);
  return out;
}
const heard = (level: number): number => pcmu.decode(packet(1, level))[0] ?? 0;

/** A playout with a fixed 60 ms wait (the adaptive delay before it has measured anything). */
function setup(depth: number): { jb: JitterBuffer; playout: Playout; frames: AudioFrame[]; sink: (f: AudioFrame) => void } {
  const jb = new JitterBuffer({ depth });
  const playout = new Playout(jb, new AdaptiveDelay({ initialMs: 60 }));
  const frames: AudioFrame[] = [];
  return { jb, playout, frames, sink: (f) => frames.push(f) };
}

describe('playout (jitter buffer -> 20 ms frames, eager)', () => {
  it('cuts 30 ms packets into 20 ms frames without concealment', () => {
    const { jb, playout, frames, sink } = setup(2);
    for (let seq = 0; seq < 8; seq++) jb.push(seq, seq * 240, packet(240, 1000 + seq * 100), 0);
    playout.drain(pcmuCodec, 0, true, sink);
    assert.equal(frames.length, 12);
    assert.ok(frames.every((f) => !f.concealed), 'no concealment for a steady 30 ms sender');
    const all = frames.flatMap((f) => [...f.samples]);
    for (let seq = 0; seq < 8; seq++) assert.ok(all.slice(seq * 240, seq * 240 + 240).every((s) => s === heard(1000 + seq * 100)));
  });

  it('joins 10 ms packets two per frame', () => {
    const { jb, playout, frames, sink } = setup(2);
    for (let seq = 0; seq < 6; seq++) jb.push(seq, seq * 80, packet(80, 500 * (seq + 1)), 0);
    playout.drain(pcmuCodec, 0, true, sink);
    assert.deepEqual(frames.map((f) => [f.samples[0], f.samples[80]]), [
      [heard(500), heard(1000)], [heard(1500), heard(2000)], [heard(2500), heard(3000)],
    ]);
  });

  it('hands an in-order packet on the moment it arrives', () => {
    const { jb, playout, frames, sink } = setup(1);
    jb.push(7, 0, packet(160, 3000), 0);
    playout.drain(pcmuCodec, 0, true, sink);
    jb.push(8, 160, packet(160, 4000), 20);
    playout.drain(pcmuCodec, 20, true, sink);
    assert.deepEqual(frames.map((f) => f.samples[0]), [heard(3000), heard(4000)]);
  });

  it('waits the target delay for a reordered packet, then plays in order', () => {
    const { jb, playout, frames, sink } = setup(1);
    jb.push(1, 0, packet(160, 1000), 0);
    playout.drain(pcmuCodec, 0, true, sink);
    jb.push(3, 320, packet(160, 3000), 40);
    playout.drain(pcmuCodec, 40, true, sink);
    assert.equal(frames.length, 1, 'packet 3 waits for the hole at 2');
    jb.push(2, 160, packet(160, 2000), 55);
    playout.drain(pcmuCodec, 55, true, sink);
    assert.deepEqual(frames.map((f) => [f.samples[0], f.concealed]), [[heard(1000), false], [heard(2000), false], [heard(3000), false]]);
    assert.equal(jb.stats.missing, 0);
  });

  it('conceals a lost packet once the wait is over: the last frame at half level once, then silence', () => {
    const { jb, playout, frames, sink } = setup(1);
    for (const seq of [0, 3]) jb.push(seq, seq * 160, packet(160, 8000), 0);
    playout.drain(pcmuCodec, 0, true, sink);
    assert.equal(frames.length, 1);
    playout.tick(pcmuCodec, 59, true, sink);
    assert.equal(frames.length, 1, 'still inside the 60 ms wait');
    playout.tick(pcmuCodec, 60, true, sink);
    assert.deepEqual(frames.map((f) => [f.concealed, f.samples[10]]), [
      [false, heard(8000)], [true, heard(8000) >> 1], [true, 0], [false, heard(8000)],
    ]);
  });

  it('keeps a 20 ms rhythm of silent concealed frames while the peer pauses, without using up its sequence numbers', () => {
    const { jb, playout, frames, sink } = setup(1);
    playout.tick(pcmuCodec, 0, true, sink);
    assert.equal(frames.length, 0, 'nothing before the first packet');
    jb.push(1, 0, packet(160, 3000), 0);
    playout.drain(pcmuCodec, 0, true, sink);
    // Due: a packet time (20 ms) plus the 60 ms wait after the last frame, then every 20 ms.
    for (let t = 20; t <= 120; t += 20) playout.tick(pcmuCodec, t, true, sink);
    assert.deepEqual(frames.map((f) => f.concealed), [false, true, true, true]);
    assert.ok(frames.slice(1).every((f) => f.samples.every((s) => s === 0)));
    // The peer resumes with the next sequence number: it plays, it is not late.
    assert.equal(jb.push(2, 160 * 7, packet(160, 5000), 130), 'accepted');
    playout.drain(pcmuCodec, 130, true, sink);
    assert.equal(frames.at(-1)?.samples[0], heard(5000));
    assert.equal(jb.stats.late, 0);
  });

  it('holds stand-ins back on catch-up ticks (our own stall), unless the peer has been quiet for 300 ms', () => {
    const { jb, playout, frames, sink } = setup(1);
    jb.push(1, 0, packet(160, 3000), 0);
    playout.drain(pcmuCodec, 0, true, sink);
    playout.tick(pcmuCodec, 150, true, sink, false);
    assert.equal(frames.length, 1, 'no stand-in while catching up');
    // The packets that waited in the socket during the stall arrive and play in order.
    jb.push(2, 160, packet(160, 4000), 151);
    playout.drain(pcmuCodec, 151, true, sink);
    assert.deepEqual(frames.map((f) => f.concealed), [false, false]);
    playout.tick(pcmuCodec, 460, true, sink, false);
    assert.ok(frames.length > 2 && frames.slice(2).every((f) => f.concealed), 'a long silence gets stand-ins anyway');
  });

  it('allocates nothing when nobody listens, but still consumes the packets', () => {
    const { jb, playout, frames, sink } = setup(1);
    jb.push(1, 0, packet(160, 3000), 0);
    playout.drain(pcmuCodec, 0, false, sink);
    assert.equal(frames.length, 0);
    assert.equal(jb.waiting, 0);
  });
});
