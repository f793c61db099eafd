import type { Logger } from '../../core/logger.js';
import type { CallMediaSession } from '../../core/ports/media.js';
import type { SrtpMode, SrtpRelay } from '../../core/ports/srtp-relay.js';
import type { OutboundTransport } from '../../core/ports/trunk-routes.js';
import { SrtpSdpPath } from '../call/sdp-path.js';

/** What decides a leg's media security: the trunk's mode and how the INVITE travels. */
export interface SecureRoute {
  readonly transport: OutboundTransport;
  readonly srtp?: SrtpMode;
}

/** Plain (no path), SDES-SRTP through the relay (a path), or why the leg must not be dialled. */
export type SecureOffer = { readonly ok: true; readonly path?: SrtpSdpPath } | { readonly ok: false; readonly sipStatus: 503; readonly reason: string; readonly cause?: unknown };

/**
 * The offer for a leg we originate (a campaign call or a transfer's second leg) on a route whose
 * trunk may require SRTP: a `required` trunk gets an RTP/SAVP offer with our keys through the relay,
 * which only TLS to the trunk itself may carry (RFC 4568 sec. 8.3: behind an outbound proxy the
 * first hop is not the trunk's TLS). `optional` and `off` trunks are offered plain RTP (docs/media.md).
 * A refusal comes before any INVITE; the caller closes its media session, the relay's is freed here.
 */
export async function secureOfferFor(
  route: SecureRoute,
  leg: { readonly callId: string; readonly session: CallMediaSession; readonly relay: SrtpRelay | undefined; readonly viaProxy: boolean },
  log: Logger,
): Promise<SecureOffer> {
  if (route.srtp !== 'required') return { ok: true };
  const tls = route.transport === 'tls' && !leg.viaProxy;
  if (!tls) return { ok: false, sipStatus: 503, reason: 'SRTP required but the route is not TLS' };
  if (!leg.relay) return { ok: false, sipStatus: 503, reason: 'SRTP required but no SRTP relay (rtpengine) runs' };
  try {
    return { ok: true, path: await SrtpSdpPath.offer(leg.relay, leg.callId, leg.session) };
  } catch (error) {
    log.warn({ err: error }, 'the SRTP relay refused our offer');
    await leg.relay.release(leg.callId);
    return { ok: false, sipStatus: 503, reason: 'SRTP relay unavailable', cause: error };
  }
}
