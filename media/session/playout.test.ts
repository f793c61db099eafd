import assert from 'node:assert/strict';
import { pcmu } from '../codecs/g711.js';
import { JitterBuffer } from '../rtp/jitter-buffer.js';
import { Playout } from './playout.js';

/** A packet of `samples` samples at a constant level (exact through mu-law for these levels). */
function packet(samples: number, level: number): Buffer {
  const out = Buffer.alloc(samples);
  pcmu.encode(new Int16Array(samples).fill(level), out);
  return out;
}
const heard = (level: number): number => pcmu.decode(packet(1, level))[0] ?? 0;

describe('playout (jitter buffer -> 20 ms frames)', () => {
  it('consumes 30 ms packets at two per three ticks without underruns', () => {
    const jb = new JitterBuffer({ depth: 2 });
    const playout = new Playout(jb);
    for (let seq = 0; seq < 8; seq++) jb.push(seq, seq * 240, packet(240, 1000 + seq * 100));
    const frames = Array.from({ length: 12 }, () => playout.next(pcmu, true));
    assert.ok(frames.every((f) => f && !f.concealed), 'no concealment for a steady 30 ms sender');
    assert.equal(jb.stats.underruns, 0);
    const all = frames.flatMap((f) => [...(f?.samples ?? [])]);
    for (let seq = 0; seq < 8; seq++) assert.ok(all.slice(seq * 240, seq * 240 + 240).every((s) => s === heard(1000 + seq * 100)));
  });

  it('consumes 10 ms packets two per tick', () => {
    const jb = new JitterBuffer({ depth: 2 });
    const playout = new Playout(jb);
    for (let seq = 0; seq < 6; seq++) jb.push(seq, seq * 80, packet(80, 500 * (seq + 1)));
    const frames = [playout.next(pcmu, true), playout.next(pcmu, true), playout.next(pcmu, true)];
    assert.deepEqual(frames.map((f) => [f?.samples[0], f?.samples[80]]), [
      [heard(500), heard(1000)], [heard(1500), heard(2000)], [heard(2500), heard(3000)],
    ]);
  });

  it('conceals a lost packet with the last frame at half level once, then silence', () => {
    const jb = new JitterBuffer({ depth: 1 });
    const playout = new Playout(jb);
    for (const seq of [0, 3]) jb.push(seq, seq * 160, packet(160, 8000));
    const frames = Array.from({ length: 4 }, () => playout.next(pcmu, true));
    assert.deepEqual(frames.map((f) => [f?.concealed, f?.samples[10]]), [
      [false, heard(8000)], [true, heard(8000) >> 1], [true, 0], [false, heard(8000)],
    ]);
  });

  it('keeps a 20 ms rhythm of silent concealed frames once audio has started', () => {
    const jb = new JitterBuffer({ depth: 1 });
    const playout = new Playout(jb);
    assert.equal(playout.next(pcmu, true), undefined, 'nothing before the first packet');
    jb.push(1, 0, packet(160, 3000));
    assert.equal(playout.next(pcmu, true)?.concealed, false);
    const idle = playout.next(pcmu, true);
    assert.deepEqual([idle?.concealed, idle?.samples.every((s) => s === 0)], [true, true]);
    assert.equal(playout.next(pcmu, false), undefined, 'no allocation when nobody listens');
  });
});
