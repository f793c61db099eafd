import assert from 'node:assert/strict';
import { SymmetricRtpLatch } from './symmetric-latch.js';

describe('symmetric RTP latching', () => {
  it('sends to the SDP address until two in-sequence packets come from one source', () => {
    const latch = new SymmetricRtpLatch('192.0.2.1', 4000);
    assert.equal(latch.accept('203.0.113.9', 61000, 10, 0), true);
    assert.deepEqual([latch.address, latch.port, latch.latched], ['192.0.2.1', 4000, false]);
    assert.equal(latch.accept('203.0.113.9', 61000, 11, 20), true);
    assert.deepEqual([latch.address, latch.port, latch.latched], ['203.0.113.9', 61000, true]);
  });

  it('does not latch on out-of-sequence packets from alternating sources', () => {
    const latch = new SymmetricRtpLatch('192.0.2.1', 4000);
    latch.accept('198.51.100.1', 1000, 1, 0);
    latch.accept('198.51.100.2', 1000, 2, 0);
    latch.accept('198.51.100.1', 1000, 3, 0);
    assert.equal(latch.latched, false);
  });

  it('drops other sources once latched, and relatches after the latched source falls silent', () => {
    const latch = new SymmetricRtpLatch('192.0.2.1', 4000, { relatchAfterMs: 1000 });
    latch.accept('203.0.113.9', 61000, 1, 0);
    latch.accept('203.0.113.9', 61000, 2, 20);
    assert.equal(latch.accept('198.51.100.66', 5000, 3, 40), false);
    assert.equal(latch.foreignPackets, 1);
    // NAT rebinding: the same peer shows up on a new port after the old one went quiet.
    assert.equal(latch.accept('203.0.113.9', 62000, 50, 1500), true);
    assert.equal(latch.accept('203.0.113.9', 62000, 51, 1520), true);
    assert.deepEqual([latch.port, latch.latched], [62000, true]);
  });

  it('starts over when the remote SDP changes', () => {
    const latch = new SymmetricRtpLatch('192.0.2.1', 4000);
    latch.accept('203.0.113.9', 61000, 1, 0);
    latch.accept('203.0.113.9', 61000, 2, 20);
    latch.reset('192.0.2.7', 4100);
    assert.deepEqual([latch.address, latch.port, latch.latched], ['192.0.2.7', 4100, false]);
  });
});
