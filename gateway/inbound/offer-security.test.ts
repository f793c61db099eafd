import assert from 'node:assert/strict';
import type { DirectoryTrunk } from '../../core/ports/call-directory.js';
import { offerSecurity } from './offer-security.js';
import { srtpModeOf } from './srtp-step.js';

const sdp = (...media: string[]): string => ['v=0', 'o=- 1 1 IN IP4 192.0.2.1', 's=-', 'c=IN IP4 192.0.2.1', 't=0 0', ...media, ''].join('\r\n');
const key = 'inline:WVNfX19zZW1jdGwgKCkgewkyMjA7fQp9CnVubGVz';

describe('offer security (RFC 4568 a=crypto, RFC 8643)', () => {
  it('reads each audio stream: plain, SDES, opportunistic SDES, and what cannot be relayed', () => {
    assert.deepEqual(offerSecurity(sdp('m=audio 4000 RTP/AVP 0')), [{ kind: 'plain' }]);
    assert.deepEqual(offerSecurity(sdp('m=audio 4000 RTP/SAVP 0', `a=crypto:1 AES_CM_128_HMAC_SHA1_80 ${key}`, `a=crypto:2 aes_cm_128_hmac_sha1_32 ${key}`)), [
      { kind: 'sdes', protocol: 'RTP/SAVP', suites: ['AES_CM_128_HMAC_SHA1_80', 'AES_CM_128_HMAC_SHA1_32'], opportunistic: false },
    ]);
    assert.deepEqual(offerSecurity(sdp('m=audio 4000 RTP/AVP 0', `a=crypto:1 AES_CM_128_HMAC_SHA1_80 ${key}`)), [
      { kind: 'sdes', protocol: 'RTP/AVP', suites: ['AES_CM_128_HMAC_SHA1_80'], opportunistic: true },
    ]);
    assert.deepEqual(offerSecurity(sdp('m=audio 4000 UDP/TLS/RTP/SAVPF 111')), [{ kind: 'other', protocol: 'UDP/TLS/RTP/SAVPF' }]);
    assert.deepEqual(offerSecurity(sdp('m=audio 4000 RTP/SAVP 0')), [{ kind: 'other', protocol: 'RTP/SAVP' }]);
  });

  it('keeps keys with their own stream, skips rejected and video streams', () => {
    const streams = offerSecurity(sdp('m=audio 0 RTP/SAVP 0', `a=crypto:1 AES_CM_128_HMAC_SHA1_80 ${key}`, 'm=video 5000 RTP/AVP 96', 'm=audio 4002 RTP/SAVP 0', `a=crypto:7 AES_256_CM_HMAC_SHA1_80 ${key}`, 'm=audio 4004 RTP/AVP 0'));
    assert.deepEqual(streams, [
      { kind: 'sdes', protocol: 'RTP/SAVP', suites: ['AES_256_CM_HMAC_SHA1_80'], opportunistic: false },
      { kind: 'plain' },
    ]);
  });
});

describe('the SRTP mode of an inbound call', () => {
  const trunk = (srtp?: DirectoryTrunk['srtp']): DirectoryTrunk => ({ id: 't', tenantId: 'a', name: 'n', extension: null, ...(srtp ? { srtp } : {}) });

  it("is its trunk's, off when the trunk predates the field", () => {
    assert.equal(srtpModeOf(trunk('required'), []), 'required');
    assert.equal(srtpModeOf(trunk(), [trunk('required')]), 'off');
  });

  it("when the number is on none of the source's trunks: required if all require it, off if none uses it, else optional; off for trusted sources", () => {
    assert.equal(srtpModeOf(undefined, [trunk('required'), trunk('required')]), 'required');
    assert.equal(srtpModeOf(undefined, [trunk('required'), trunk('off')]), 'optional');
    assert.equal(srtpModeOf(undefined, [trunk('off'), trunk()]), 'off');
    assert.equal(srtpModeOf(undefined, []), 'off');
  });
});
