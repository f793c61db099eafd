import type { Logger } from '../../core/logger.js';
import type { DirectoryTrunk } from '../../core/ports/call-directory.js';
import type { MediaPort } from '../../core/ports/media.js';
import type { SrtpMode, SrtpRelay } from '../../core/ports/srtp-relay.js';
import { SrtpSdpPath } from '../call/sdp-path.js';
import type { ServerRequest } from '../sip/ua/server-request.js';
import { SipError } from '../sip/ua/sip-error.js';
import { state } from './invite-state.js';
import type { Step } from './method-router.js';
import { offerSecurity, relayableSuites, type OfferSecurity } from './offer-security.js';

export interface SrtpStepDeps {
  readonly media: MediaPort;
  /** The SDES <-> RTP relay (rtpengine); absent: SRTP offers are refused 488. */
  readonly relay?: SrtpRelay;
  readonly logger: Logger;
  readonly retryAfterSeconds: number;
}

/**
 * The call's SRTP mode: its trunk's; for a number not routed through any of the source's trunks,
 * `required` if all of them require SRTP, `off` if none uses it, else `optional` (both are taken);
 * trusted sources (the native stack) have none.
 */
export function srtpModeOf(trunk: DirectoryTrunk | undefined, trunks: readonly DirectoryTrunk[]): SrtpMode {
  if (trunk) return trunk.srtp ?? 'off';
  if (trunks.length === 0) return 'off';
  const modes = trunks.map((t) => t.srtp ?? 'off');
  if (modes.every((m) => m === 'required')) return 'required';
  return modes.some((m) => m !== 'off') ? 'optional' : 'off';
}

/** 488 with a Warning (RFC 3261 sec. 20.43) naming why: 303 for the media protocol, 399 for the rest. */
function refuse(sreq: ServerRequest, code: 303 | 399, why: string): SipError {
  const local = sreq.flow.local;
  const agent = local.address.includes(':') ? `[${local.address}]:${local.port}` : `${local.address}:${local.port}`;
  return new SipError(488, `Not Acceptable Here (${why})`, [['Warning', `${code} ${agent} "${why}"`]]);
}

/**
 * Media security of an inbound trunk call (docs/media.md, SRTP), before the media step: decides
 * plain RTP (then the media step answers as always), SDES-SRTP through the relay (this step
 * negotiates and the media step has nothing left to do), or a 488 that says why. SDES keys are
 * only taken over TLS (RFC 4568 sec. 8.3: the key is in the clear in the SDP otherwise).
 */
export function srtpStep(deps: SrtpStepDeps): Step<ServerRequest> {
  return async (sreq, next) => {
    const s = state(sreq);
    const req = sreq.request;
    const mode = srtpModeOf(s.trunk, s.trunks);
    const secure = sreq.flow.secure;
    const isSdp = (req.contentType ?? '').toLowerCase().startsWith('application/sdp');
    if (req.body.length === 0) {
      // Late offer: our offer goes in the 200. A required trunk gets RTP/SAVP, which needs TLS.
      if (mode !== 'required') return next();
      if (!secure) throw refuse(sreq, 399, 'this trunk requires SRTP, whose SDES keys need SIP over TLS (RFC 4568 sec. 8.3)');
      return lateSecureOffer(sreq, next);
    }
    if (!isSdp) return next();
    const streams = offerSecurity(req.body.toString('utf8'));
    const sdes = streams.find((x): x is Extract<OfferSecurity, { kind: 'sdes' }> => x.kind === 'sdes');
    // A stream the media step can take as it is: plain RTP/AVP, or RFC 8643's RTP/AVP with keys
    // (answered without keys it stays plain, sec. 4).
    const plainPossible = streams.some((x) => x.kind === 'plain' || (x.kind === 'sdes' && x.opportunistic));
    if (mode === 'off') {
      if (sdes && !plainPossible) throw refuse(sreq, 303, 'SRTP is off on this trunk: offer RTP/AVP');
      return next();
    }
    if (!secure) {
      if (mode === 'required') throw refuse(sreq, 399, 'this trunk requires SRTP, whose SDES keys need SIP over TLS (RFC 4568 sec. 8.3)');
      if (sdes && !plainPossible) throw refuse(sreq, 399, 'SDES keys (a=crypto) are refused over unencrypted SIP: use TLS (RFC 4568 sec. 8.3)');
      return next();
    }
    const usable = sdes && sdes.suites.some((suite) => relayableSuites.has(suite));
    if (!usable) {
      if (mode === 'required') {
        throw refuse(sreq, sdes ? 399 : 303, sdes ? 'no supported crypto suite (AES_CM_128_HMAC_SHA1_80 or _32)' : 'this trunk requires SRTP: offer RTP/SAVP with a=crypto (RFC 4568)');
      }
      return next();
    }
    if (!deps.relay) {
      deps.logger.warn({ callId: s.callId, sipCallId: req.callId }, 'SRTP offered but no SRTP relay (rtpengine) runs: see docs/media.md, SRTP');
      if (mode === 'optional' && plainPossible) return next();
      throw refuse(sreq, 399, 'SRTP is not available on this gateway');
    }
    await relayedAnswer(sreq, deps.relay, next);
  };

  async function relayedAnswer(sreq: ServerRequest, relay: SrtpRelay, next: () => Promise<void>): Promise<void> {
    const s = state(sreq);
    const req = sreq.request;
    s.cleanup = () => void relay.release(s.callId);
    let plainOffer: string;
    try {
      plainOffer = await relay.toPlatform({ callId: s.callId, from: 'carrier' }, req.body.toString('utf8'), 'offer');
    } catch (error) {
      throw unavailable(sreq, error, 'the SRTP relay refused the offer');
    }
    let answer;
    try {
      answer = await deps.media.answer(plainOffer, { callId: s.callId, sipCallId: req.callId });
    } catch (error) {
      throw unavailable(sreq, error, 'no media session available');
    }
    if (!answer.ok) throw new SipError(answer.sipStatus, `${answer.sipStatus === 488 ? 'Not Acceptable Here' : 'Bad Request'} (${answer.message.slice(0, 60)})`);
    s.session = answer.session;
    try {
      s.answerSdp = await relay.toCarrier({ callId: s.callId, from: 'platform' }, answer.sdp, 'answer');
    } catch (error) {
      throw unavailable(sreq, error, 'the SRTP relay refused the answer');
    }
    s.sdpPath = new SrtpSdpPath(relay, s.callId, answer.session, s.answerSdp);
    await next();
  }

  async function lateSecureOffer(sreq: ServerRequest, next: () => Promise<void>): Promise<void> {
    const s = state(sreq);
    const relay = deps.relay;
    if (!relay) throw refuse(sreq, 399, 'SRTP is not available on this gateway');
    s.cleanup = () => void relay.release(s.callId);
    try {
      const session = await deps.media.offer({ callId: s.callId, sipCallId: sreq.request.callId });
      s.session = session;
      const path = await SrtpSdpPath.offer(relay, s.callId, session);
      Object.assign(s, { sdpPath: path, answerSdp: path.localSdp, lateOffer: true });
    } catch (error) {
      throw unavailable(sreq, error, 'no secure offer could be made');
    }
    await next();
  }

  function unavailable(sreq: ServerRequest, error: unknown, what: string): SipError {
    deps.logger.warn({ err: error, callId: state(sreq).callId, sipCallId: sreq.request.callId }, `SRTP call: ${what}`);
    return new SipError(503, 'Service Unavailable (media relay)', [['Retry-After', String(deps.retryAfterSeconds)]]);
  }
}
