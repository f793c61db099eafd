import assert from 'node:assert/strict';
import { OutputQueue } from './output-queue.js';

const ramp = (n: number, from = 1): Int16Array => Int16Array.from({ length: n }, (_, i) => from + i);

describe('outgoing audio queue', () => {
  it('cuts writes of any length into 160-sample frames in order', () => {
    const q = new OutputQueue();
    q.write(ramp(100));
    q.write(ramp(250, 101));
    assert.equal(q.queuedMs, (350 / 8000) * 1000);
    assert.deepEqual([...(q.take() ?? [])], [...ramp(160)]);
    assert.deepEqual([...(q.take() ?? [])], [...ramp(160, 161)]);
  });

  it('waits one tick for the rest of a partial frame, then pads it with silence', () => {
    const q = new OutputQueue();
    q.write(ramp(30));
    assert.equal(q.take(), undefined);
    const frame = q.take();
    assert.deepEqual([...(frame?.subarray(0, 30) ?? [])], [...ramp(30)]);
    assert.ok(frame?.subarray(30).every((s) => s === 0));
    assert.equal(q.take(), undefined);
  });

  it('resolves play once its last sample is taken, and interrupted on clear', async () => {
    const q = new OutputQueue();
    const first = q.play([ramp(320)]);
    await new Promise((r) => setImmediate(r));
    q.take();
    q.take();
    assert.equal(await first, 'completed');
    const second = q.play([ramp(800)]);
    await new Promise((r) => setImmediate(r));
    q.take();
    q.clear();
    assert.equal(await second, 'interrupted');
    assert.equal(q.take(), undefined);
  });

  it('applies back-pressure to a fast stream', async () => {
    const q = new OutputQueue(1600);
    let produced = 0;
    async function* source(): AsyncGenerator<Int16Array> {
      for (let i = 0; i < 20; i++) {
        produced++;
        yield ramp(800);
      }
    }
    const playing = q.play(source());
    await new Promise((r) => setTimeout(r, 20));
    assert.ok(produced < 20, `produced ${produced} chunks without anyone taking`);
    while (q.take() || q.queuedMs > 0 || produced < 20) await new Promise((r) => setImmediate(r));
    assert.equal(await playing, 'completed');
  });
});
