import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { parseRtpPacket, seqDelta, serializeRtpPacket } from './rtp-packet.js';

describe('RTP packets (RFC 3550 sec. 5.1)', () => {
  it('round-trips every header field, CSRCs, extension and padding', () => {
    const payload = Buffer.from([1, 2, 3, 4, 5]);
    const wire = serializeRtpPacket({
      marker: true, payloadType: 101, sequenceNumber: 65535, timestamp: 0xfffffff0, ssrc: 0xdeadbeef,
      csrcs: [1, 0xffffffff], extension: { profile: 0xbede, data: Buffer.from([9, 9, 9, 9]) }, padTo: 4, payload,
    });
    assert.equal(wire.length % 4, 0);
    const p = parseRtpPacket(wire);
    assert.ok(p);
    assert.equal(p.version, 2);
    assert.equal(p.marker, true);
    assert.equal(p.padding, true);
    assert.equal(p.payloadType, 101);
    assert.equal(p.sequenceNumber, 65535);
    assert.equal(p.timestamp, 0xfffffff0);
    assert.equal(p.ssrc, 0xdeadbeef);
    assert.deepEqual(p.csrcs, [1, 0xffffffff]);
    assert.equal(p.extension?.profile, 0xbede);
    assert.deepEqual([...(p.extension?.data ?? [])], [9, 9, 9, 9]);
    assert.deepEqual([...p.payload], [1, 2, 3, 4, 5]);
  });

  describe('malformed datagrams yield undefined, never an exception', () => {
    const good = serializeRtpPacket({ payloadType: 0, sequenceNumber: 1, timestamp: 1, ssrc: 1, payload: Buffer.alloc(160) });
    const cases: Record<string, Buffer> = {
      empty: Buffer.alloc(0),
      'shorter than the fixed header': good.subarray(0, 11),
      'version 1': Buffer.from([0x40, ...good.subarray(1)]),
      'CSRC count beyond the datagram': Buffer.concat([Buffer.from([0x8f]), good.subarray(1, 20)]),
      'extension header truncated': Buffer.concat([Buffer.from([0x90]), good.subarray(1, 14)]),
      'extension length beyond the datagram': Buffer.from([0x90, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0xbe, 0xde, 0xff, 0xff]),
      'padding count zero': Buffer.from([0xa0, ...good.subarray(1, good.length - 1), 0]),
      'padding count larger than the payload': Buffer.from([0xa0, ...good.subarray(1, 13), 200]),
      'RTCP sender report (muxed)': Buffer.from([0x80, 200, 0, 6, ...Buffer.alloc(24)]),
    };
    for (const [name, datagram] of Object.entries(cases)) {
      it(name, () => assert.equal(parseRtpPacket(datagram), undefined));
    }
    it('10,000 random datagrams', () => {
      for (let i = 0; i < 10_000; i++) {
        const d = randomBytes(i % 64);
        const p = parseRtpPacket(d);
        if (p) assert.ok(p.payload.length <= d.length);
      }
    });
  });

  it('computes wrap-aware sequence distances', () => {
    assert.equal(seqDelta(0, 65535), 1);
    assert.equal(seqDelta(65535, 0), -1);
    assert.equal(seqDelta(10, 5), 5);
    assert.equal(seqDelta(5, 10), -5);
  });
});
