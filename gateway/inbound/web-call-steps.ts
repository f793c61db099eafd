import type { Logger } from '../../core/logger.js';
import type { MediaPort } from '../../core/ports/media.js';
import type { BridgeLeg, WebCallAuthority, WebRtcBridge } from '../../core/ports/web-call.js';
import type { ServerRequest } from '../sip/ua/server-request.js';
import { SipError } from '../sip/ua/sip-error.js';
import { callerUser } from './e164.js';
import { state } from './invite-state.js';
import { chain, type Step } from './method-router.js';

/**
 * Web calls (docs/sip-stack.md, Web calls): a browser's INVITE over SIP/WebSocket (RFC 7118) carries
 * a short-lived call token the management API issued for one tenant and one target. It runs a
 * chain of its own: the token replaces the trunk's source check and the number lookup, and its
 * WebRTC media (ICE + DTLS-SRTP, RFC 8827) goes through a relay that hands the platform plain RTP.
 */
export const callTokenHeader = 'x-call-token';

/** Browsers reach the gateway over these transports only (RFC 7118 sec. 5: `ws` and `wss`). */
const webTransports = new Set(['WS', 'WSS']);

export interface WebCallDeps {
  readonly web: { readonly authority: WebCallAuthority; readonly bridge: WebRtcBridge };
  readonly media: MediaPort;
  readonly logger: Logger;
  readonly retryAfterSeconds: number;
}

/** An INVITE with a call token takes the web chain; any other takes the phone chain. */
export function byCallToken(web: ReadonlyArray<Step<ServerRequest>>, phone: ReadonlyArray<Step<ServerRequest>>): Step<ServerRequest> {
  const webChain = chain(web);
  const phoneChain = chain(phone);
  return (sreq) => (sreq.request.headers.get(callTokenHeader) !== undefined ? webChain(sreq, async () => undefined) : phoneChain(sreq, async () => undefined));
}

/** Without web calls configured, a call token is refused rather than ignored (it would meet the trunk check). */
export const refuseCallTokens: Step<ServerRequest> = async (sreq, next) => {
  if (sreq.request.headers.get(callTokenHeader) !== undefined) throw new SipError(403, 'Forbidden (web calls are not enabled on this gateway)');
  await next();
};

export function webCallSteps(deps: WebCallDeps): { authorize: Step<ServerRequest>; media: Step<ServerRequest> } {
  const { authority, bridge } = deps.web;

  /** The token must be valid, unexpired and issued for the Request-URI's target: else 403 (404 once the target is gone). */
  const authorize: Step<ServerRequest> = async (sreq, next) => {
    if (!webTransports.has(sreq.flow.transport)) throw new SipError(403, 'Forbidden (call tokens are accepted over WebSocket only)');
    const token = sreq.request.headers.get(callTokenHeader)?.trim() ?? '';
    const target = callerUser(sreq.request.requestUri);
    if (!token || !target) throw new SipError(403, 'Forbidden (call token or target missing)');
    const decision = await authority.authorize(token, target);
    if (!decision.ok) {
      deps.logger.info({ sipCallId: sreq.request.callId, reason: decision.reason, detail: decision.detail }, 'web call refused');
      throw decision.reason === 'gone' ? new SipError(404, 'Not Found (web call target no longer exists)') : new SipError(403, 'Forbidden (call token refused)');
    }
    const { route } = decision;
    Object.assign(state(sreq), {
      web: route,
      trusted: true,
      matchedBy: 'request-uri',
      // The concurrency slot is the number's, or the recipe's for a recipe called directly.
      number: {
        id: route.numberId ?? `web-recipe:${route.recipeId}`,
        tenantId: route.tenantId,
        e164: route.e164 ?? '',
        enabled: route.enabled,
        recipeId: route.recipeId,
        sipTrunkId: null,
        language: route.language,
        maxCallDurationMinutes: route.maxCallDurationMinutes,
        endCallOnSilenceMinutes: route.endCallOnSilenceMinutes,
      },
    });
    await next();
  };

  /**
   * WebRTC offer -> relay -> RTP offer -> our media's answer -> relay -> WebRTC answer. A browser
   * always offers in the INVITE (JSEP); a late offer would need us to offer WebRTC, so it is 488.
   */
  const media: Step<ServerRequest> = async (sreq, next) => {
    const req = sreq.request;
    const s = state(sreq);
    if (req.body.length === 0 || !(req.contentType ?? '').toLowerCase().startsWith('application/sdp')) {
      throw new SipError(488, 'Not Acceptable Here (a web call must carry an SDP offer)');
    }
    const leg: BridgeLeg = { callId: s.callId, sipCallId: req.callId, fromTag: req.from.tag ?? '', toTag: sreq.toTag };
    s.cleanup = () => void bridge.release(leg);
    const unavailable = (error: unknown, what: string): SipError => {
      deps.logger.warn({ err: error, callId: s.callId, sipCallId: req.callId }, `web call: ${what}`);
      return new SipError(503, 'Service Unavailable (media relay)', [['Retry-After', String(deps.retryAfterSeconds)]]);
    };
    let plainOffer: string;
    try {
      plainOffer = await bridge.offer(leg, req.body.toString('utf8'));
    } catch (error) {
      throw unavailable(error, 'the media relay refused the offer');
    }
    let answer;
    try {
      answer = await deps.media.answer(plainOffer, { callId: s.callId, sipCallId: req.callId });
    } catch (error) {
      throw unavailable(error, 'no media session available');
    }
    if (!answer.ok) throw new SipError(answer.sipStatus, `${answer.sipStatus === 488 ? 'Not Acceptable Here' : 'Bad Request'} (${answer.message.slice(0, 60)})`);
    s.session = answer.session;
    try {
      s.answerSdp = await bridge.answer(leg, answer.sdp);
    } catch (error) {
      throw unavailable(error, 'the media relay refused the answer');
    }
    await next();
  };

  return { authorize, media };
}
