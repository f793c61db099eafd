import assert from 'node:assert/strict';
import { defaultCapabilities, negotiate } from './offer-answer.js';
import { parseSdp, SdpError } from './sdp.js';

const local = { ...defaultCapabilities, address: '127.0.0.1' };
const origin = { sessionId: '1', sessionVersion: 1 };

/** Shapes seen from real carrier and PBX equipment (addresses replaced with documentation ranges). */
const carrierOffers: Record<string, string> = {
  'static payload types without rtpmap, media-level c=, vendor attributes':
    'v=0\r\no=Sonus_UAC 416346 253123 IN IP4 198.51.100.7\r\ns=SIP Media Capabilities\r\nt=0 0\r\n' +
    'm=audio 16384 RTP/AVP 0 8 18 101\r\nc=IN IP4 198.51.100.8\r\na=rtpmap:101 TELEPHONE-EVENT/8000\r\n' +
    'a=fmtp:101 0-15\r\na=sendrecv\r\na=ptime:20\r\na=maxptime:150\r\na=silenceSupp:off - - - -\r\n',
  'bare LF line endings, trailing spaces, b= and i= lines':
    'v=0\no=- 3918495742 3918495743 IN IP4 203.0.113.5 \ns=session\ni=PBX call\nc=IN IP4 203.0.113.5\nb=AS:64\n' +
    't=0 0\nm=audio 20000 RTP/AVP 18 0 96\na=rtpmap:18 G729/8000\na=fmtp:18 annexb=no\na=rtpmap:0 PCMU/8000\n' +
    'a=rtpmap:96 telephone-event/8000\na=fmtp:96 0-16\n',
  'c= at both levels (media level wins), rtcp attribute, CN offered':
    'v=0\r\no=CiscoSystemsSIP-GW-UserAgent 1 1 IN IP4 192.0.2.1\r\ns=SIP Call\r\nc=IN IP4 192.0.2.1\r\nt=0 0\r\n' +
    'm=audio 17000 RTP/AVP 8 13 126\r\nc=IN IP4 192.0.2.99\r\na=rtcp:17001 IN IP4 192.0.2.99\r\n' +
    'a=rtpmap:126 telephone-event/8000\r\na=fmtp:126 0-16\r\na=rtpmap:13 CN/8000\r\n',
  'opus first, lower-case names, telephone-event at 48 kHz and 8 kHz, 20-digit session id':
    'v=0\r\no=- 8463256091843254631 2 IN IP4 192.0.2.44\r\ns=-\r\nc=IN IP4 192.0.2.44\r\nt=0 0\r\n' +
    'm=audio 40000 RTP/AVP 111 0 8 110 101\r\na=rtpmap:111 opus/48000/2\r\na=rtpmap:0 pcmu/8000\r\n' +
    'a=rtpmap:8 pcma/8000\r\na=rtpmap:110 telephone-event/48000\r\na=rtpmap:101 telephone-event/8000\r\n' +
    'a=fmtp:101 0-16\r\na=sendrecv\r\na=rtcp-mux\r\n',
};

describe('SDP parsing (RFC 8866)', () => {
  it('picks the 8 kHz telephone-event and PCMU behind a codec we do not speak', () => {
    const result = negotiate(carrierOffers['opus first, lower-case names, telephone-event at 48 kHz and 8 kHz, 20-digit session id'] ?? '', local, 30000, origin);
    assert.ok(result.ok);
    assert.deepEqual([result.audio.codec, result.audio.payloadType, result.audio.telephoneEventPayloadType], ['PCMU', 0, 101]);
  });

  it('accepts a port count on m= and a TTL on c=', () => {
    const doc = parseSdp('v=0\r\no=- 1 1 IN IP4 192.0.2.1\r\ns=-\r\nc=IN IP4 192.0.2.1/127\r\nt=0 0\r\nm=audio 49170/2 RTP/AVP 0\r\n');
    assert.deepEqual([doc.media[0]?.port, doc.media[0]?.address], [49170, '192.0.2.1']);
  });

  it('resolves static payload types the peer did not map', () => {
    const doc = parseSdp(carrierOffers['static payload types without rtpmap, media-level c=, vendor attributes'] ?? '');
    const m = doc.media[0];
    assert.ok(m);
    assert.deepEqual(m.formats.map((f) => `${f.payloadType}:${f.encoding}/${f.clockRate}`), ['0:PCMU/8000', '8:PCMA/8000', '18:G729/8000', '101:TELEPHONE-EVENT/8000']);
    assert.equal(m.address, '198.51.100.8');
    assert.equal(m.direction, 'sendrecv');
    assert.equal(doc.originAddress, '198.51.100.7');
  });

  it('prefers media-level c= over session-level c= and reads a=rtcp', () => {
    const m = parseSdp(carrierOffers['c= at both levels (media level wins), rtcp attribute, CN offered'] ?? '').media[0];
    assert.equal(m?.address, '192.0.2.99');
    assert.equal(m?.rtcpPort, 17001);
  });

  for (const [name, sdp] of Object.entries(carrierOffers)) {
    it(`answers a carrier offer: ${name}`, () => {
      const result = negotiate(sdp, local, 30000, origin);
      assert.ok(result.ok, result.ok ? '' : result.message);
      assert.ok(['PCMU', 'PCMA'].includes(result.audio.codec));
      assert.ok(result.audio.telephoneEventPayloadType !== undefined);
    });
  }

  it('rejects bodies that are not SDP with a typed error', () => {
    assert.throws(() => parseSdp(''), SdpError);
    assert.throws(() => parseSdp('INVITE sip:x SIP/2.0'), (e: unknown) => e instanceof SdpError && e.code === 'malformed');
    assert.throws(() => parseSdp('v=0\r\ns=-\r\n'), /o= line/);
  });

  it('rejects an active stream without any c= line', () => {
    assert.throws(() => parseSdp('v=0\r\no=- 1 1 IN IP4 192.0.2.1\r\ns=-\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\n'), /no c= line/);
  });

  it('accepts a rejected stream without c=', () => {
    const doc = parseSdp('v=0\r\no=- 1 1 IN IP4 192.0.2.1\r\ns=-\r\nt=0 0\r\nm=audio 0 RTP/AVP 0\r\n');
    assert.equal(doc.media[0]?.port, 0);
  });
});
