import assert from 'node:assert/strict';
import { pino } from 'pino';
import type { CallMediaSession } from '../../core/ports/media.js';
import type { SrtpRelay } from '../../core/ports/srtp-relay.js';
import { secureOfferFor } from './secure-offer.js';

/** A relay that turns the offer into a marked "secure" one, or fails; it notes what it freed. */
function relay(fails = false): SrtpRelay & { released: string[] } {
  const released: string[] = [];
  return {
    released,
    toPlatform: async (_leg, sdp) => sdp,
    toCarrier: async (_leg, sdp) => {
      if (fails) throw new Error('rtpengine: no reply');
      return sdp.replace('RTP/AVP', 'RTP/SAVP');
    },
    release: async (callId) => void released.push(callId),
  };
}

const session = { localSdp: 'v=0\r\nm=audio 4000 RTP/AVP 0\r\n' } as CallMediaSession;
const log = pino({ level: 'silent' });
const leg = (r: SrtpRelay | undefined, viaProxy = false) => ({ callId: 'c1-transfer', session, relay: r, viaProxy });

// The relay's real work (rtpengine, baresip srtp-mand on both kinds of leg) is tested in
// test/gateway/srtp-trunk.test.ts; here, which leg is offered what, and each refusal's words.
describe('secureOfferFor: the offer of a leg we originate, by the trunk SRTP mode', () => {
  it('offers plain RTP on off and optional trunks (no path: the media session speaks itself)', async () => {
    for (const srtp of [undefined, 'off', 'optional'] as const) {
      const r = await secureOfferFor({ transport: 'tls', ...(srtp ? { srtp } : {}) }, leg(relay()), log);
      assert.deepEqual(r, { ok: true });
    }
  });

  it('offers RTP/SAVP through the relay on a required trunk over TLS', async () => {
    const r = await secureOfferFor({ transport: 'tls', srtp: 'required' }, leg(relay()), log);
    assert.ok(r.ok && r.path);
    assert.match(r.path.localSdp, /RTP\/SAVP/);
  });

  it('refuses 503 before any INVITE when the keys would not travel over TLS to the trunk', async () => {
    for (const [transport, viaProxy] of [['udp', false], ['tcp', false], ['tls', true]] as const) {
      const r = await secureOfferFor({ transport, srtp: 'required' }, leg(relay(), viaProxy), log);
      assert.deepEqual(r, { ok: false, sipStatus: 503, reason: 'SRTP required but the route is not TLS' });
    }
  });

  it('refuses 503 when no relay runs, and frees the relay session when the relay fails', async () => {
    assert.deepEqual(await secureOfferFor({ transport: 'tls', srtp: 'required' }, leg(undefined), log), {
      ok: false,
      sipStatus: 503,
      reason: 'SRTP required but no SRTP relay (rtpengine) runs',
    });
    const failing = relay(true);
    const r = await secureOfferFor({ transport: 'tls', srtp: 'required' }, leg(failing), log);
    assert.ok(!r.ok);
    assert.equal(r.reason, 'SRTP relay unavailable');
    assert.match(String(r.cause), /no reply/);
    assert.deepEqual(failing.released, ['c1-transfer']);
  });
});
