import type { CallMediaSession, SdpResult } from '../../core/ports/media.js';
import type { SrtpRelay } from '../../core/ports/srtp-relay.js';
import { SipError } from '../sip/ua/sip-error.js';

/**
 * How SDP crosses between a call's SIP peer and its media session (RFC 3264 offer/answer after the
 * first exchange): straight to the session, or through the SRTP relay when the peer's media is
 * SDES-SRTP (docs/media.md, SRTP). Re-offers, late answers and session refreshes all go this way,
 * so a secure call never shows the peer a plain SDP.
 */
export interface SdpPath {
  /** What the peer last got from us: a session refresh offers it again (RFC 4028 sec. 9). */
  readonly localSdp: string;
  /** A re-offer from the peer (RFC 3264 sec. 8) -> the answer for the peer, or why not. */
  answer(offer: string): Promise<SdpResult>;
  /** The peer's answer to our offer (late offer, session refresh, our re-offers). */
  applyAnswer(answer: string): Promise<SdpResult>;
}

/** Plain RTP: the media session speaks to the peer itself. */
export function directSdpPath(media: CallMediaSession): SdpPath {
  return {
    get localSdp() {
      return media.localSdp;
    },
    answer: async (offer) => media.update(offer),
    applyAnswer: async (answer) => media.applyAnswer(answer),
  };
}

/** The relay failing mid-call: the re-offer is refused, the call stays up (RFC 3261 sec. 14.2). */
const relayDown = (error: unknown): SipError =>
  new SipError(503, `Service Unavailable (SRTP relay: ${error instanceof Error ? error.message.slice(0, 60) : 'failed'})`);

/**
 * SDES-SRTP through the relay: the peer sees the relay's RTP/SAVP side with its keys, the media
 * session the relay's plain side. `localSdp` is the secure SDP we last sent.
 */
export class SrtpSdpPath implements SdpPath {
  private lastPeerAnswer: string | undefined;

  constructor(
    private readonly relay: SrtpRelay,
    private readonly callId: string,
    private readonly media: CallMediaSession,
    private secureLocal: string,
  ) {}

  get localSdp(): string {
    return this.secureLocal;
  }

  /** Our first offer (outbound call, late offer): the media session's plain offer made secure. */
  static async offer(relay: SrtpRelay, callId: string, media: CallMediaSession): Promise<SrtpSdpPath> {
    const secure = await relay.toCarrier({ callId, from: 'platform' }, media.localSdp, 'offer');
    return new SrtpSdpPath(relay, callId, media, secure);
  }

  async answer(offer: string): Promise<SdpResult> {
    let plain: string;
    try {
      plain = await this.relay.toPlatform({ callId: this.callId, from: 'carrier' }, offer, 'offer');
    } catch (error) {
      throw relayDown(error);
    }
    const result = this.media.update(plain);
    if (!result.ok) return result;
    try {
      this.secureLocal = await this.relay.toCarrier({ callId: this.callId, from: 'platform' }, result.sdp, 'answer');
    } catch (error) {
      throw relayDown(error);
    }
    return { ok: true, sdp: this.secureLocal };
  }

  async applyAnswer(answer: string): Promise<SdpResult> {
    // A session refresh gets the same answer again: nothing changed, nothing to tell the relay.
    if (answer === this.lastPeerAnswer) return { ok: true, sdp: this.secureLocal };
    let plain: string;
    try {
      plain = await this.relay.toPlatform({ callId: this.callId, from: 'carrier' }, answer, 'answer');
    } catch (error) {
      return { ok: false, reason: 'no_audio_stream', message: `the SRTP relay refused the answer: ${error instanceof Error ? error.message : String(error)}`, sipStatus: 488 };
    }
    const result = this.media.applyAnswer(plain);
    if (result.ok) this.lastPeerAnswer = answer;
    return result.ok ? { ok: true, sdp: this.secureLocal } : result;
  }
}
