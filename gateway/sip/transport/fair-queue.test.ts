import assert from 'node:assert/strict';
import { FairQueue } from './fair-queue.js';

const settle = async (q: FairQueue<string>): Promise<void> => {
  for (let i = 0; i < 1000 && q.waiting > 0; i++) await new Promise((r) => setImmediate(r));
};

describe('FairQueue: admitted datagrams handed on per source in rounds', () => {
  it('takes at most the turn budget per source and round, so a late quiet source waits one round, not the backlog', async () => {
    const seen: string[] = [];
    const q = new FairQueue<string>((x) => seen.push(x), { perSource: 100, turnBudget: 3 });
    for (let i = 0; i < 10; i++) q.push('127.0.0.1', `flood${i}`);
    q.push('127.0.0.2', 'options');
    await settle(q);
    assert.deepEqual(seen.slice(0, 5), ['flood0', 'flood1', 'flood2', 'options', 'flood3']);
    assert.deepEqual(seen.filter((s) => s.startsWith('flood')), Array.from({ length: 10 }, (_, i) => `flood${i}`), 'order per source is kept');
  });

  it('yields to the event loop between rounds', async () => {
    const seen: string[] = [];
    const q = new FairQueue<string>((x) => seen.push(x), { perSource: 100, turnBudget: 2 });
    for (let i = 0; i < 6; i++) q.push('a', `a${i}`);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(seen, ['a0', 'a1'], 'one round per turn of the loop');
    await settle(q);
    assert.equal(seen.length, 6);
  });

  it('refuses more than perSource waiting items of one source, and takes nothing once stopped', async () => {
    const seen: string[] = [];
    const q = new FairQueue<string>((x) => seen.push(x), { perSource: 2, turnBudget: 8 });
    assert.deepEqual([q.push('a', '1'), q.push('a', '2'), q.push('a', '3'), q.push('b', '4')], [true, true, false, true]);
    await settle(q);
    assert.deepEqual(seen, ['1', '2', '4']);
    q.stop();
    assert.equal(q.push('a', '5'), false);
  });
});
