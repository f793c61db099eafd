import assert from 'node:assert/strict';
import { acceptAnswer, createOffer, createReoffer, defaultCapabilities, negotiate, type MediaCapabilities } from './offer-answer.js';
import { parseSdp } from './sdp.js';

const local: MediaCapabilities = { ...defaultCapabilities, address: '127.0.0.1' };
const origin = { sessionId: '4242', sessionVersion: 1 };
const crlf = (lines: string[]): string => lines.join('\r\n') + '\r\n';

function answerOf(offer: string, direction?: 'sendrecv' | 'sendonly') {
  const result = negotiate(offer, local, 30000, origin, direction);
  assert.ok(result.ok, result.ok ? '' : result.message);
  return { result, answer: parseSdp(result.sdp) };
}

describe('SDP offer/answer (RFC 3264)', () => {
  describe('answering a plain offer', () => {
    const offer = crlf([
      'v=0', 'o=alice 2890844526 2890844526 IN IP4 192.0.2.10', 's=-', 'c=IN IP4 192.0.2.10', 't=0 0',
      'm=audio 49170 RTP/AVP 8 0 101', 'a=rtpmap:8 PCMA/8000', 'a=rtpmap:0 PCMU/8000',
      'a=rtpmap:101 telephone-event/8000', 'a=fmtp:101 0-16', 'a=ptime:20',
    ]);

    it('picks the offerer\'s first common codec and keeps telephone-event\'s payload type', () => {
      const { result, answer } = answerOf(offer);
      assert.ok(result.ok);
      assert.equal(result.audio.codec, 'PCMA');
      assert.equal(result.audio.payloadType, 8);
      assert.equal(result.audio.telephoneEventPayloadType, 101);
      assert.equal(result.audio.remoteAddress, '192.0.2.10');
      assert.equal(result.audio.remotePort, 49170);
      assert.equal(result.audio.direction, 'sendrecv');
      const m = answer.media[0];
      assert.ok(m);
      assert.equal(m.port, 30000);
      assert.deepEqual(m.formats.map((f) => [f.payloadType, f.encoding, f.fmtp]), [[8, 'PCMA', undefined], [101, 'TELEPHONE-EVENT', '0-16']]);
      assert.equal(m.ptime, 20);
      assert.equal(m.address, '127.0.0.1');
      assert.equal(answer.sessionId, '4242');
    });

    it('honours local codec order when configured', () => {
      const result = negotiate(offer, { ...local, preferLocalCodecOrder: true }, 30000, origin);
      assert.ok(result.ok);
      assert.equal(result.audio.codec, 'PCMU');
    });

    it('omits telephone-event when the offer has none', () => {
      const { result, answer } = answerOf(offer.replace(/ 101\r\n/, '\r\n').replace(/a=rtpmap:101.*\r\na=fmtp:101 0-16\r\n/, ''));
      assert.ok(result.ok);
      assert.equal(result.audio.telephoneEventPayloadType, undefined);
      assert.equal(answer.media[0]?.formats.length, 1);
    });
  });

  describe('no common codec', () => {
    it('returns a typed failure the gateway maps to 488', () => {
      const result = negotiate(
        crlf(['v=0', 'o=- 1 1 IN IP4 192.0.2.1', 's=-', 'c=IN IP4 192.0.2.1', 't=0 0', 'm=audio 4000 RTP/AVP 18 4', 'a=rtpmap:18 G729/8000']),
        local, 30000, origin,
      );
      assert.deepEqual(result.ok ? null : [result.reason, result.sipStatus], ['no_common_codec', 488]);
    });

    it('rejects SRTP-only and video-only offers', () => {
      const srtp = negotiate(crlf(['v=0', 'o=- 1 1 IN IP4 192.0.2.1', 's=-', 'c=IN IP4 192.0.2.1', 't=0 0', 'm=audio 4000 RTP/SAVP 0']), local, 30000, origin);
      assert.equal(srtp.ok ? null : srtp.reason, 'no_audio_stream');
      const video = negotiate(crlf(['v=0', 'o=- 1 1 IN IP4 192.0.2.1', 's=-', 'c=IN IP4 192.0.2.1', 't=0 0', 'm=video 4000 RTP/AVP 31']), local, 30000, origin);
      assert.equal(video.ok ? null : video.sipStatus, 488);
    });

    it('rejects streams on IPv6 or FQDN addresses (our sockets are IPv4)', () => {
      for (const c of ['IN IP6 2001:db8::1', 'IN IP4 media.example.com']) {
        const result = negotiate(crlf(['v=0', 'o=- 1 1 IN IP4 192.0.2.1', 's=-', `c=${c}`, 't=0 0', 'm=audio 4000 RTP/AVP 0']), local, 30000, origin);
        assert.equal(result.ok ? null : result.reason, 'no_audio_stream', c);
      }
    });

    it('answers 400-class malformed for garbage', () => {
      const result = negotiate('hello world', local, 30000, origin);
      assert.deepEqual(result.ok ? null : [result.reason, result.sipStatus], ['malformed', 400]);
    });
  });

  describe('multiple and rejected m= lines', () => {
    it('keeps the m= line count and rejects the rest with port 0 (sec. 6)', () => {
      const { result, answer } = answerOf(crlf([
        'v=0', 'o=- 7 7 IN IP4 192.0.2.1', 's=-', 'c=IN IP4 192.0.2.1', 't=0 0',
        'm=video 5000 RTP/AVP 96', 'a=rtpmap:96 H264/90000',
        'm=audio 0 RTP/AVP 0',
        'm=audio 6000 RTP/AVP 18', 'a=rtpmap:18 G729/8000',
        'm=audio 7000 RTP/AVP 0 101', 'a=rtpmap:101 telephone-event/8000', 'a=fmtp:101 0-15',
        'm=audio 8000 RTP/AVP 0',
      ]));
      assert.ok(result.ok);
      assert.equal(result.audio.mediaIndex, 3);
      assert.equal(result.audio.remotePort, 7000);
      assert.deepEqual(answer.media.map((m) => [m.type, m.port]), [['video', 0], ['audio', 0], ['audio', 0], ['audio', 30000], ['audio', 0]]);
      assert.equal(answer.media[0]?.formatList, '96');
      assert.equal(answer.media[3]?.formats[1]?.fmtp, '0-15');
    });
  });

  describe('hold (sec. 8.4)', () => {
    const base = ['v=0', 'o=- 1 2 IN IP4 192.0.2.1', 's=-', 'c=IN IP4 192.0.2.1', 't=0 0', 'm=audio 4000 RTP/AVP 0'];
    const cases: [string, string[], string][] = [
      ['sendonly offer', [...base, 'a=sendonly'], 'recvonly'],
      ['recvonly offer', [...base, 'a=recvonly'], 'sendonly'],
      ['inactive offer', [...base, 'a=inactive'], 'inactive'],
      ['session-level inactive', [...base.slice(0, 5), 'a=inactive', base[5] ?? ''], 'inactive'],
      ['old-style c=0.0.0.0', base.map((l) => l.replace('192.0.2.1', '0.0.0.0')), 'recvonly'],
    ];
    for (const [name, lines, expected] of cases) {
      it(`answers ${expected} to a ${name}`, () => {
        const { result, answer } = answerOf(crlf(lines));
        assert.ok(result.ok);
        assert.equal(result.audio.direction, expected);
        assert.equal(answer.media[0]?.direction, expected);
      });
    }

    it('puts the call on hold from our side with sendonly', () => {
      const { result } = answerOf(crlf(base), 'sendonly');
      assert.ok(result.ok);
      assert.equal(result.audio.direction, 'sendonly');
      assert.equal(result.audio.remoteHold, false);
    });
  });

  describe('re-offers in an existing session (sec. 8)', () => {
    it('keeps every m= line, offers the negotiated codec with the new direction, and reads the answer at the same index', () => {
      const offer = crlf([
        'v=0', 'o=- 7 7 IN IP4 192.0.2.1', 's=-', 'c=IN IP4 192.0.2.1', 't=0 0',
        'm=video 5000 RTP/AVP 96', 'a=rtpmap:96 H264/90000',
        'm=audio 7000 RTP/AVP 8 101', 'a=rtpmap:101 telephone-event/8000',
      ]);
      const first = negotiate(offer, local, 30000, origin);
      assert.ok(first.ok);
      const hold = parseSdp(createReoffer(first.sdp, first.audio, local, 30000, { sessionId: '4242', sessionVersion: 2 }, 'sendonly'));
      assert.deepEqual(hold.media.map((m) => [m.type, m.port, m.direction]), [['video', 0, 'sendrecv'], ['audio', 30000, 'sendonly']]);
      assert.deepEqual(hold.media[1]?.formats.map((f) => f.encoding), ['PCMA', 'TELEPHONE-EVENT']);
      assert.equal(hold.sessionVersion, 2);
      const peerAnswer = crlf(['v=0', 'o=- 7 8 IN IP4 192.0.2.1', 's=-', 'c=IN IP4 192.0.2.1', 't=0 0', 'm=video 0 RTP/AVP 96', 'm=audio 7000 RTP/AVP 8 101', 'a=recvonly']);
      const accepted = acceptAnswer(peerAnswer, local, 'sendonly', first.audio.mediaIndex);
      assert.ok(accepted.ok);
      assert.deepEqual([accepted.audio.direction, accepted.audio.mediaIndex, accepted.audio.codec], ['sendonly', 1, 'PCMA']);
    });
  });

  describe('offers for outbound calls', () => {
    it('offers our codecs and telephone-event, and reads the answer', () => {
      const offer = parseSdp(createOffer(local, 31000, origin));
      const m = offer.media[0];
      assert.ok(m);
      assert.deepEqual(m.formats.map((f) => f.encoding), ['PCMU', 'PCMA', 'G722', 'TELEPHONE-EVENT']);
      assert.equal(m.port, 31000);
      const answer = negotiate(offer, { ...local, codecs: ['PCMA'] }, 32000, { sessionId: '9', sessionVersion: 1 });
      assert.ok(answer.ok);
      const accepted = acceptAnswer(answer.sdp, local);
      assert.ok(accepted.ok);
      assert.equal(accepted.audio.codec, 'PCMA');
      assert.equal(accepted.audio.remotePort, 32000);
      assert.equal(accepted.audio.telephoneEventPayloadType, 101);
    });

    it('reports a rejected audio stream in the answer', () => {
      const result = acceptAnswer(crlf(['v=0', 'o=- 1 1 IN IP4 192.0.2.1', 's=-', 'c=IN IP4 192.0.2.1', 't=0 0', 'm=audio 0 RTP/AVP 0']), local);
      assert.equal(result.ok ? null : result.reason, 'no_common_codec');
    });
  });
});
