import assert from 'node:assert/strict';
import { GroupCommit } from './group-commit.js';

/** A flush the test finishes by hand, recording each group it was given. */
function manualFlush(): { groups: number[][]; finish: (i: number, error?: Error) => void; flush: (items: readonly number[]) => Promise<string[]> } {
  const groups: number[][] = [];
  const finishers: Array<(error?: Error) => void> = [];
  return {
    groups,
    finish: (i, error) => finishers[i]!(error),
    flush: (items) => {
      groups.push([...items]);
      return new Promise<string[]>((resolve, reject) => finishers.push((error) => (error ? reject(error) : resolve(items.map((n) => `stored ${n}`)))));
    },
  };
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('GroupCommit', () => {
  it('writes the first item at once and everything that arrives meanwhile as the next group, resolving each after its flush', async () => {
    const f = manualFlush();
    const group = new GroupCommit({ flush: f.flush, maxBatch: 100, maxConcurrent: 1 });
    const first = group.submit(1);
    const rest = [2, 3, 4].map((n) => group.submit(n));
    await tick();
    assert.deepEqual(f.groups, [[1]]);
    let resolved = 0;
    for (const p of rest) void p.then(() => resolved++);
    f.finish(0);
    assert.equal(await first, 'stored 1');
    await tick();
    assert.deepEqual(f.groups, [[1], [2, 3, 4]]);
    assert.equal(resolved, 0, 'not answered before its own group is written');
    f.finish(1);
    assert.deepEqual(await Promise.all(rest), ['stored 2', 'stored 3', 'stored 4']);
    assert.equal(group.pending, 0);
  });

  it('caps a group at maxBatch and runs up to maxConcurrent flushes at once', async () => {
    const f = manualFlush();
    const group = new GroupCommit({ flush: f.flush, maxBatch: 2, maxConcurrent: 2 });
    const all = [1, 2, 3, 4, 5].map((n) => group.submit(n));
    await tick();
    // A free slot takes what is queued at once: 1 and 2 each alone; 3-5 wait and go two at a time.
    assert.deepEqual(f.groups, [[1], [2]]);
    f.finish(0);
    await tick();
    assert.deepEqual(f.groups, [[1], [2], [3, 4]]);
    f.finish(1);
    await tick();
    assert.deepEqual(f.groups, [[1], [2], [3, 4], [5]]);
    f.finish(2);
    f.finish(3);
    await group.drained();
    assert.equal((await Promise.all(all)).length, 5);
  });

  it('fails every item of a failed group and only those', async () => {
    const f = manualFlush();
    const group = new GroupCommit({ flush: f.flush, maxBatch: 10, maxConcurrent: 1 });
    const a = group.submit(1);
    const b = [group.submit(2), group.submit(3)];
    await tick();
    f.finish(0, new Error('connection lost'));
    await assert.rejects(a, /connection lost/);
    await tick();
    f.finish(1);
    assert.deepEqual(await Promise.all(b), ['stored 2', 'stored 3']);
  });

  it('rejects a flush that returns the wrong number of results', async () => {
    const group = new GroupCommit<number, string>({ flush: async () => ['only one'], maxBatch: 10, maxConcurrent: 1 });
    const first = group.submit(1);
    const [x, y] = [group.submit(2), group.submit(3)];
    assert.equal(await first, 'only one');
    await assert.rejects(x, /2 items/);
    await assert.rejects(y, /2 items/);
  });
});
