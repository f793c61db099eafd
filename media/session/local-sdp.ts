import { randomBytes } from 'node:crypto';
import { acceptAnswer, createOffer, createReoffer, negotiate, type MediaCapabilities, type NegotiatedAudio, type NegotiationResult, type SdpOrigin } from '../sdp/offer-answer.js';
import type { Direction } from '../sdp/sdp.js';

/**
 * Our side of a call's offer/answer exchange (RFC 3264): the last SDP we sent, its o= session id
 * and version, and the direction we last offered (an answer is checked against it).
 */
export class LocalSdp {
  private sdp = '';
  private version = 1;
  private offered: Direction = 'sendrecv';
  private readonly sessionId = String(randomBytes(4).readUInt32BE(0));

  constructor(
    private readonly capabilities: MediaCapabilities,
    private readonly port: number,
  ) {}

  get text(): string {
    return this.sdp;
  }

  /** Our first offer (outbound call). */
  offer(): string {
    this.offered = 'sendrecv';
    this.sdp = createOffer(this.capabilities, this.port, this.origin());
    return this.sdp;
  }

  /**
   * The answer to the peer's offer. RFC 3264 sec. 8: once media is up (`established`) our o=
   * version moves only when our SDP actually changes (a session refresh gets the same answer back).
   */
  answer(offerSdp: string, established: boolean): NegotiationResult {
    let result = negotiate(offerSdp, this.capabilities, this.port, this.origin());
    if (!result.ok) return result;
    if (established && result.sdp !== this.sdp) {
      this.version++;
      result = negotiate(offerSdp, this.capabilities, this.port, this.origin());
      if (!result.ok) return result;
    }
    this.sdp = result.sdp;
    return result;
  }

  /** A re-offer of ours: hold with 'sendonly' (RFC 3264 sec. 8.4), resume with 'sendrecv'. */
  reoffer(audio: NegotiatedAudio, direction: Direction): string {
    this.version++;
    this.sdp = createReoffer(this.sdp, audio, this.capabilities, this.port, this.origin(), direction);
    this.offered = direction;
    return this.sdp;
  }

  /** The peer's answer to our last offer, for the media stream at `mediaIndex`. */
  acceptAnswer(answerSdp: string, mediaIndex: number): NegotiationResult {
    return acceptAnswer(answerSdp, this.capabilities, this.offered, mediaIndex);
  }

  private origin(): SdpOrigin {
    return { sessionId: this.sessionId, sessionVersion: this.version };
  }
}
