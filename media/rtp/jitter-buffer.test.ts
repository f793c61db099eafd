import assert from 'node:assert/strict';
import { JitterBuffer, type PopResult } from './jitter-buffer.js';

const payload = (n: number): Buffer => Buffer.from([n & 0xff]);
const drain = (jb: JitterBuffer, ticks: number): (PopResult | undefined)[] => Array.from({ length: ticks }, () => jb.pop());
const played = (results: (PopResult | undefined)[]): string[] =>
  results.map((r) => (r === undefined ? '-' : r.kind === 'packet' ? String(r.seq) : `miss${r.seq}`));

describe('jitter buffer', () => {
  it('waits for its depth, then plays in sequence order', () => {
    const jb = new JitterBuffer({ depth: 3 });
    jb.push(10, 0, payload(10));
    jb.push(11, 160, payload(11));
    assert.equal(jb.pop(), undefined);
    jb.push(12, 320, payload(12));
    assert.deepEqual(played(drain(jb, 4)), ['10', '11', '12', '-']);
  });

  it('reorders a shuffled burst', () => {
    const jb = new JitterBuffer({ depth: 4 });
    for (const seq of [102, 100, 103, 101, 105, 104]) assert.equal(jb.push(seq, seq * 160, payload(seq)), 'accepted');
    assert.deepEqual(played(drain(jb, 6)), ['100', '101', '102', '103', '104', '105']);
  });

  it('drops duplicates and packets whose slot has already played', () => {
    const jb = new JitterBuffer({ depth: 2 });
    jb.push(1, 0, payload(1));
    jb.push(2, 160, payload(2));
    assert.equal(jb.push(2, 160, payload(2)), 'duplicate');
    jb.pop();
    jb.pop();
    assert.equal(jb.push(1, 0, payload(1)), 'late');
    assert.equal(jb.stats.duplicates, 1);
    assert.equal(jb.stats.late, 1);
  });

  it('reports holes as missing so the caller can conceal them', () => {
    const jb = new JitterBuffer({ depth: 2 });
    for (const seq of [1, 2, 4, 5]) jb.push(seq, seq * 160, payload(seq));
    assert.deepEqual(played(drain(jb, 6)), ['1', '2', 'miss3', '4', '5', '-']);
    assert.equal(jb.stats.missing, 1);
  });

  it('tells a packet whose slot was concealed from a duplicate of a played one', () => {
    const jb = new JitterBuffer({ depth: 1 });
    for (const seq of [1, 3]) jb.push(seq, seq * 160, payload(seq));
    assert.deepEqual(played(drain(jb, 3)), ['1', 'miss2', '3']);
    assert.equal(jb.push(2, 320, payload(2)), 'concealed');
    assert.equal(jb.push(3, 480, payload(3)), 'late');
    assert.equal(jb.stats.late, 2);
  });

  it('crosses the 16-bit sequence wrap', () => {
    const jb = new JitterBuffer({ depth: 3 });
    for (const seq of [65534, 0, 65535, 1]) jb.push(seq, 0, payload(seq));
    assert.deepEqual(played(drain(jb, 4)), ['65534', '65535', '0', '1']);
  });

  it('resynchronises on a jump far outside its window', () => {
    const jb = new JitterBuffer({ depth: 1 });
    jb.push(100, 0, payload(1));
    assert.equal(jb.push(30000, 0, payload(2)), 'resync');
    assert.deepEqual(played(drain(jb, 2)), ['30000', '-']);
  });

  it('re-primes after running dry', () => {
    const jb = new JitterBuffer({ depth: 2 });
    jb.push(1, 0, payload(1));
    jb.push(2, 0, payload(2));
    drain(jb, 3);
    jb.push(3, 0, payload(3));
    assert.equal(jb.pop(), undefined);
    jb.push(4, 0, payload(4));
    assert.deepEqual(played(drain(jb, 2)), ['3', '4']);
    assert.equal(jb.stats.underruns, 1);
  });
});

describe('jitter buffer latency bound', () => {
  it('trims back to its depth when a fast sender piles packets up', () => {
    const jb = new JitterBuffer({ depth: 2, maxQueued: 5 });
    for (let seq = 1; seq <= 8; seq++) jb.push(seq, seq * 160, payload(seq));
    assert.deepEqual(played(drain(jb, 3)), ['7', '8', '-']);
    assert.equal(jb.stats.trimmed, 6);
  });
});
