import assert from 'node:assert/strict';
import { FairQueue } from './fair-queue.js';

describe('FairQueue: messages handed on per source in rounds', () => {
  it('takes at most the turn budget per source and round, so a late quiet source waits one round, not the backlog', () => {
    const seen: string[] = [];
    const q = new FairQueue<string>({ perSource: 100, turnBudget: 3 });
    for (let i = 0; i < 10; i++) q.push('127.0.0.1', `flood${i}`);
    q.push('127.0.0.2', 'options');
    q.round((x) => seen.push(x));
    assert.deepEqual(seen, ['flood0', 'flood1', 'flood2', 'options']);
    while (q.waiting > 0) q.round((x) => seen.push(x));
    assert.deepEqual(seen.filter((s) => s.startsWith('flood')), Array.from({ length: 10 }, (_, i) => `flood${i}`), 'order per source is kept');
  });

  it('refuses more than perSource waiting items of one source', () => {
    const seen: string[] = [];
    const q = new FairQueue<string>({ perSource: 2, turnBudget: 8 });
    assert.deepEqual([q.push('a', '1'), q.push('a', '2'), q.push('a', '3'), q.push('b', '4')], [true, true, false, true]);
    q.round((x) => seen.push(x));
    assert.deepEqual(seen, ['1', '2', '4']);
    assert.equal(q.waiting, 0);
  });

  it('hands what waits to the caller when cleared', () => {
    const q = new FairQueue<string>({ perSource: 10, turnBudget: 1 });
    q.push('a', '1');
    q.push('a', '2');
    q.push('b', '3');
    const dropped: string[] = [];
    q.clear((x) => dropped.push(x));
    assert.deepEqual(dropped.sort(), ['1', '2', '3']);
    assert.equal(q.waiting, 0);
  });
});
