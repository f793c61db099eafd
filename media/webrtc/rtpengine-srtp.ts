import type { NgValue } from 'rtpengine-client';
import type { SrtpRelay, SrtpRelayLeg } from '../../core/ports/srtp-relay.js';
import type { RtpengineBridge } from './rtpengine-bridge.js';

/**
 * Crypto suites we offer to carriers. RFC 4568 sec. 6.2 makes AES_CM_128_HMAC_SHA1_80 mandatory to
 * implement, and it (then its 32-bit tag variant, sec. 6.2.1) is what SIP trunks and softphones
 * take; rtpengine offers twelve suites by default, NULL (no encryption) and F8 among them, and the
 * answerer picks the first it knows. Everything else is switched off with `SDES: no-<suite>`.
 */
const notOffered = [
  'AEAD_AES_256_GCM',
  'AEAD_AES_128_GCM',
  'AES_256_CM_HMAC_SHA1_80',
  'AES_256_CM_HMAC_SHA1_32',
  'AES_192_CM_HMAC_SHA1_80',
  'AES_192_CM_HMAC_SHA1_32',
  'F8_128_HMAC_SHA1_80',
  'F8_128_HMAC_SHA1_32',
  'NULL_HMAC_SHA1_80',
  'NULL_HMAC_SHA1_32',
].map((suite) => `no-${suite}`);

/** What every command carries: rtpengine rewrites addresses, and neither side does ICE. */
const common: Record<string, NgValue> = {
  ICE: 'remove',
  replace: ['origin', 'session-connection'],
  flags: ['trust-address'],
};

const other = (party: SrtpRelayLeg['from']): SrtpRelayLeg['from'] => (party === 'carrier' ? 'platform' : 'carrier');

/**
 * SDES-SRTP <-> RTP through rtpengine's ng protocol (the rtpengine the gateway already runs for web
 * calls). The relay session is keyed on the platform's call id with the two parties as tags; the
 * offerer's tag is always `from-tag` (rtpengine's rule), so a re-offer from either side works.
 * Towards the platform the protocol is RTP/AVP with RTCP on its own port; towards the carrier
 * rtpengine answers in the profile the carrier offered (RTP/SAVP, or RTP/AVP with a=crypto for an
 * RFC 8643 opportunistic offer), and our own offers are RTP/SAVP with DTLS off (SDES only).
 */
export class RtpengineSrtpRelay implements SrtpRelay {
  constructor(private readonly bridge: RtpengineBridge) {}

  async toPlatform(leg: SrtpRelayLeg & { readonly from: 'carrier' }, sdp: string, kind: 'offer' | 'answer'): Promise<string> {
    return this.pass(leg, sdp, kind, { 'transport-protocol': 'RTP/AVP', 'rtcp-mux': ['demux'] });
  }

  async toCarrier(leg: SrtpRelayLeg & { readonly from: 'platform' }, sdp: string, kind: 'offer' | 'answer'): Promise<string> {
    return this.pass(leg, sdp, kind, { 'transport-protocol': 'RTP/SAVP', DTLS: 'off', SDES: notOffered });
  }

  async release(callId: string): Promise<void> {
    try {
      await this.bridge.command('delete', { 'call-id': callId, 'from-tag': 'carrier' }, { callId });
    } catch {
      // Nothing to free (never offered, or already gone).
    }
  }

  private async pass(leg: SrtpRelayLeg, sdp: string, kind: 'offer' | 'answer', towards: Record<string, NgValue>): Promise<string> {
    // The offerer's tag is from-tag for both the offer and its answer.
    const offerer = kind === 'offer' ? leg.from : other(leg.from);
    const options: Record<string, NgValue> = { 'call-id': leg.callId, 'from-tag': offerer, 'to-tag': other(offerer), sdp, ...common };
    // Offers set the protocol and suites of the side they go to; an answer follows its offer.
    const response = await this.bridge.command(kind, kind === 'offer' ? { ...options, ...towards } : options, { callId: leg.callId });
    return this.bridge.sdpOf(kind, response, { callId: leg.callId });
  }
}
