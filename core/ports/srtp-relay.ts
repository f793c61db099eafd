/**
 * SDES-SRTP for SIP trunks (RFC 4568 keys in the SDP, RFC 3711 media): the media relay (media/
 * implements it with rtpengine) turns the carrier's RTP/SAVP side into the plain RTP/AVP the
 * platform's media speaks, and back. The gateway decides when a call goes through it (the trunk's
 * `srtp` mode and the signalling transport); media/ itself never sees a key.
 */

/** A trunk's SRTP mode (control-api/model/domain/sip-trunk.ts). */
export type SrtpMode = 'off' | 'optional' | 'required';

/** Which relay session and which side: the relay keys its state on the call and the two parties. */
export interface SrtpRelayLeg {
  /** Unique per call (the platform's call id). */
  readonly callId: string;
  /** The party whose SDP is being passed: the carrier's offer or answer, or ours. */
  readonly from: 'carrier' | 'platform';
}

export interface SrtpRelay {
  /**
   * An SDP from the carrier (an SDES offer, `RTP/SAVP` or RFC 8643 `RTP/AVP` with `a=crypto`, or
   * its answer to our secure offer) -> the plain `RTP/AVP` SDP for the platform's media.
   */
  toPlatform(leg: SrtpRelayLeg & { readonly from: 'carrier' }, sdp: string, kind: 'offer' | 'answer'): Promise<string>;
  /**
   * A plain SDP of the platform's media (our answer, or our own offer) -> what the carrier gets:
   * an answer in the profile the carrier offered with our `a=crypto`, or an `RTP/SAVP` offer.
   */
  toCarrier(leg: SrtpRelayLeg & { readonly from: 'platform' }, sdp: string, kind: 'offer' | 'answer'): Promise<string>;
  /** Frees the relay's session (call ended or set-up failed); never throws. */
  release(callId: string): Promise<void>;
}
