import assert from 'node:assert/strict';
import { DtmfReceiver, planDigit, writeTelephoneEvent, type DtmfEvent, type TelephoneEvent } from './rfc4733.js';

const payload = (e: TelephoneEvent): Buffer => {
  const b = Buffer.alloc(4);
  writeTelephoneEvent(b, 0, e);
  return b;
};

function receiver(): { rx: DtmfReceiver; got: DtmfEvent[] } {
  const got: DtmfEvent[] = [];
  return { rx: new DtmfReceiver((e) => got.push(e)), got };
}

describe('RFC 4733 telephone-events', () => {
  describe('sending a digit', () => {
    it('marks the first packet, grows the duration and repeats the end packet three times', () => {
      const plan = planDigit('5', 100);
      assert.deepEqual(plan.map((p) => [p.marker, p.event.duration, p.event.end]), [
        [true, 160, false], [false, 320, false], [false, 480, false], [false, 640, false],
        [false, 800, true], [false, 800, true], [false, 800, true],
      ]);
      assert.ok(plan.every((p) => p.event.event === 5 && p.event.volume === 10));
    });
  });

  describe('receiving', () => {
    it('reports one digit per key press despite the redundant end packets', () => {
      const { rx, got } = receiver();
      for (const [i, p] of planDigit('#', 100).entries()) rx.onPacket(1000, payload(p.event), i * 20);
      assert.deepEqual(got, [{ digit: '#', durationMs: 100, endSeen: true }]);
    });

    it('separates two presses of the same digit by timestamp, without marker bits', () => {
      const { rx, got } = receiver();
      for (const ts of [8000, 9600]) {
        for (const p of planDigit('7', 60)) rx.onPacket(ts, payload(p.event), ts / 8);
      }
      assert.deepEqual(got.map((e) => e.digit), ['7', '7']);
    });

    it('closes an event whose end packets were lost when the next one starts', () => {
      const { rx, got } = receiver();
      rx.onPacket(100, payload({ event: 1, end: false, volume: 10, duration: 160 }), 0);
      rx.onPacket(100, payload({ event: 1, end: false, volume: 10, duration: 320 }), 20);
      rx.onPacket(900, payload({ event: 2, end: true, volume: 10, duration: 400 }), 100);
      assert.deepEqual(got, [{ digit: '1', durationMs: 40, endSeen: false }, { digit: '2', durationMs: 50, endSeen: true }]);
    });

    it('closes a stale event on poll', () => {
      const { rx, got } = receiver();
      rx.onPacket(100, payload({ event: 9, end: false, volume: 10, duration: 160 }), 0);
      rx.poll(200);
      assert.equal(got.length, 0);
      rx.poll(300);
      assert.deepEqual(got.map((e) => e.digit), ['9']);
      rx.onPacket(100, payload({ event: 9, end: true, volume: 10, duration: 800 }), 320);
      assert.equal(got.length, 1);
    });

    it('ignores short payloads and event 16 (flash) as a digit', () => {
      const { rx, got } = receiver();
      rx.onPacket(1, Buffer.from([1, 2]), 0);
      rx.onPacket(2, payload({ event: 16, end: true, volume: 0, duration: 800 }), 0);
      assert.equal(got.length, 0);
    });
  });
});
