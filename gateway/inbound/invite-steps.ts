import { randomUUID } from 'node:crypto';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import type { CallDirectory, DirectoryNumber } from '../../core/ports/call-directory.js';
import type { CallHandler, InboundCallInfo } from '../../core/ports/call-handler.js';
import type { CallMediaSession, MediaPort } from '../../core/ports/media.js';
import type { SrtpRelay } from '../../core/ports/srtp-relay.js';
import type { WebCallAuthority, WebRtcBridge } from '../../core/ports/web-call.js';
import { Call } from '../call/call.js';
import { observeAnswer } from '../call/call-metrics.js';
import type { CallRegistry } from '../call/call-registry.js';
import { Dialog, type DialogHost } from '../sip/dialog/dialog.js';
import { negotiateAsUas, type SessionTimerPolicy } from '../sip/dialog/session-timer.js';
import type { ServerRequest } from '../sip/ua/server-request.js';
import { SipError } from '../sip/ua/sip-error.js';
import type { AbuseGuard } from './abuse-guard.js';
import { startSessionTimer } from '../call/call-session-timer.js';
import { EDGE_SOURCE_HEADER, type EdgeSources } from './edge-source.js';
import { callerUser, dialledUser, normaliseE164 } from './e164.js';
import type { Step } from './method-router.js';
import { byCallToken, refuseCallTokens, webCallSteps } from './web-call-steps.js';
import { byRegisteredContact, registeredTrunkStep, type RegisteredContacts } from './registered-steps.js';
import { countInviteOutcome } from './count-invite.js';
import { inviteStates as states, state } from './invite-state.js';
import { srtpStep } from './srtp-step.js';

export interface InviteDeps {
  readonly host: DialogHost;
  readonly directory: CallDirectory;
  readonly media: MediaPort;
  readonly callHandler: CallHandler;
  readonly registry: CallRegistry;
  readonly guard: AbuseGuard;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Addresses of the platform's native telephony stack, trusted without a trunk. */
  readonly trustedSources: ReadonlySet<string>;
  /** The SIP edge in front of this gateway, if any (edge-source.ts). */
  readonly edge: EdgeSources;
  readonly maxCallsPerNumber: number;
  readonly maxCallsPerTenant: number;
  /** Time between 180 Ringing and the answer. */
  readonly ringMs: number;
  readonly retryAfterSeconds: number;
  /** RFC 4028 session timers: interval we volunteer and our Min-SE. */
  readonly sessionTimer: SessionTimerPolicy;
  /** Web calls from browsers (web-call-steps.ts); absent: an INVITE with a call token is refused 403. */
  readonly web?: { readonly authority: WebCallAuthority; readonly bridge: WebRtcBridge };
  /** Trunks registered with their carriers (registered-steps.ts): calls to their Contacts skip the source check. */
  readonly registered?: RegisteredContacts;
  /** SDES-SRTP for trunks that use it (srtp-step.ts); absent: SRTP offers are refused 488. */
  readonly srtp?: SrtpRelay;
}

/** The INVITE steps, in order; each answers its own status (spec: inbound routing). */
export function inviteSteps(deps: InviteDeps): Array<Step<ServerRequest>> {
  /** 100 Trying at once (RFC 3261 sec. 17.2.1 says within 200 ms; the lookups may take longer). */
  const trying: Step<ServerRequest> = async (sreq, next) => {
    sreq.respond(100);
    states.set(sreq, { callId: randomUUID(), arrivedAt: deps.clock.now(), trunks: [], trusted: false });
    deps.registry.pending(1);
    try {
      await next();
    } finally {
      deps.registry.pending(-1);
      const s = states.get(sreq);
      const status = sreq.finalResponse?.status;
      // Anything that did not become a call gives back what it held.
      if (s && !(status !== undefined && status < 300)) {
        s.release?.();
        void s.session?.close();
        s.cleanup?.();
      }
    }
  };

  /**
   * Source check: a trunk's termination address or the native stack, else 403. Behind a SIP edge
   * the address is the one the edge passed on (edge-source.ts), and only the edge may send calls.
   */
  const source: Step<ServerRequest> = async (sreq, next) => {
    const packetSource = sreq.flow.remote.address;
    const judged = deps.edge.sourceOf(packetSource, sreq.request.headers.values(EDGE_SOURCE_HEADER.toLowerCase()));
    if (judged.kind === 'refused') {
      if (judged.status === 403) deps.guard.recordAuthFailure(packetSource);
      throw new SipError(judged.status, judged.reason);
    }
    const address = judged.address;
    const trusted = deps.trustedSources.has(address);
    if (deps.edge.enabled && !judged.viaEdge && !trusted) {
      deps.guard.recordAuthFailure(address);
      throw new SipError(403, 'Forbidden (calls come through the SIP edge)');
    }
    const trunks = trusted ? [] : await deps.directory.trunksForSource(address);
    if (!trusted && trunks.length === 0) {
      deps.guard.recordAuthFailure(address);
      throw new SipError(403, 'Forbidden (source is not a trunk termination address)');
    }
    Object.assign(state(sreq), { trunks, trusted, source: address });
    await next();
  };

  /** Number: Request-URI user, then To user (E.164), then a trunk's Extension Number; else 404. */
  const identify: Step<ServerRequest> = async (sreq, next) => {
    const s = state(sreq);
    const req = sreq.request;
    const candidates: Array<[InboundCallInfo['matchedBy'], string | undefined]> = [
      ['request-uri', dialledUser(req.requestUri)],
      ['to', dialledUser(req.to.uri)],
    ];
    const tenants = new Set(s.trunks.map((t) => t.tenantId));
    const allowed = (tenantId: string): boolean => s.trusted || tenants.has(tenantId);
    for (const [how, user] of candidates) {
      const e164 = user ? normaliseE164(user) : undefined;
      if (!e164) continue;
      const n = await deps.directory.numberByE164(e164);
      if (n && allowed(n.tenantId)) {
        Object.assign(s, { number: n, matchedBy: how, trunk: s.trunks.find((t) => t.id === n.sipTrunkId) });
        return next();
      }
    }
    // Spec fallback for carriers that do not forward To: the trunk's Extension Number.
    for (const [, user] of candidates) {
      if (!user || !/^[0-9]{2,16}$/.test(user)) continue;
      const trunk = await deps.directory.trunkByExtension(user);
      if (!trunk || !(s.trusted || s.trunks.some((t) => t.id === trunk.id))) continue;
      const n = await deps.directory.numberForTrunk(trunk);
      if (n) {
        Object.assign(s, { number: n, matchedBy: 'extension', trunk });
        return next();
      }
    }
    throw new SipError(404, 'Not Found (number not provisioned)');
  };

  const enabled: Step<ServerRequest> = async (sreq, next) => {
    if (!state(sreq).number?.enabled) throw new SipError(480, 'Temporarily Unavailable (number disabled)');
    await next();
  };

  /** RFC 4028 sec. 9: an interval below our Min-SE from a UAC that supports timers -> 422 with Min-SE. */
  const sessionTimer: Step<ServerRequest> = async (sreq, next) => {
    const timer = negotiateAsUas(sreq.request, deps.sessionTimer);
    if (timer.kind === 'too-small') throw new SipError(422, 'Session Interval Too Small', [['Min-SE', String(timer.minSe)]]);
    state(sreq).timer = timer;
    await next();
  };

  /** Tenant and number concurrency: 486 for a busy number, 503 + Retry-After for a tenant at its limit. */
  const limits: Step<ServerRequest> = async (sreq, next) => {
    const s = state(sreq);
    const n = s.number as DirectoryNumber;
    if (deps.registry.numberCount(n.id) >= deps.maxCallsPerNumber) throw new SipError(486, 'Busy Here (number at its concurrency limit)');
    if (deps.registry.tenantCount(n.tenantId) >= deps.maxCallsPerTenant) {
      throw new SipError(503, 'Service Unavailable (tenant at its concurrency limit)', [['Retry-After', String(deps.retryAfterSeconds)]]);
    }
    s.release = deps.registry.reserve(n.tenantId, n.id);
    await next();
  };

  /** Offer/answer through the media port: 488 without a common codec (RFC 3264 sec. 6). */
  const media: Step<ServerRequest> = async (sreq, next) => {
    const req = sreq.request;
    // The SRTP step has already negotiated through its relay.
    if (state(sreq).session) return next();
    const type = (req.contentType ?? '').toLowerCase();
    if (req.body.length > 0 && !type.startsWith('application/sdp')) throw new SipError(415, 'Unsupported Media Type', [['Accept', 'application/sdp']]);
    // Only the media port's own failures mean "no capacity": the later steps run outside this
    // try, so their errors keep their status instead of turning into this 503.
    let answer;
    const { callId } = state(sreq);
    try {
      if (req.body.length === 0) {
        // Late offer (RFC 3261 sec. 13.2.1): our offer goes in the 200, the answer comes in the ACK.
        const session = await deps.media.offer({ callId, sipCallId: req.callId });
        Object.assign(state(sreq), { session, answerSdp: session.localSdp, lateOffer: true });
      } else {
        answer = await deps.media.answer(req.body.toString('utf8'), { callId, sipCallId: req.callId });
      }
    } catch (error) {
      deps.logger.warn({ err: error, callId, sipCallId: req.callId }, 'no media session available');
      throw new SipError(503, 'Service Unavailable (no media capacity)', [['Retry-After', String(deps.retryAfterSeconds)]]);
    }
    if (!answer) return next();
    if (!answer.ok) throw new SipError(answer.sipStatus, `${answer.sipStatus === 488 ? 'Not Acceptable Here' : 'Bad Request'} (${answer.message.slice(0, 60)})`);
    Object.assign(state(sreq), { session: answer.session, answerSdp: answer.sdp });
    await next();
  };

  /** 180, then 200 with the SDP answer, then the control plane gets the call. */
  const answer: Step<ServerRequest> = async (sreq) => {
    const s = state(sreq);
    const dialog = Dialog.fromInvite(deps.host, sreq);
    sreq.respond(180, { headers: dialog.answerHeaders() });
    if (deps.ringMs > 0) await new Promise<void>((resolve) => deps.clock.setTimeout(resolve, deps.ringMs));
    if (sreq.signal.aborted || sreq.answered) {
      dialog.end('cancelled');
      return;
    }
    const n = s.number as DirectoryNumber;
    const session = s.session as CallMediaSession;
    const req = sreq.request;
    const info: InboundCallInfo = {
      id: s.callId,
      sipCallId: req.callId,
      tenantId: n.tenantId,
      numberId: s.web ? s.web.numberId : n.id,
      dialled: s.web ? (s.web.e164 ?? `recipe-${s.web.recipeId}`) : n.e164,
      ...(s.web ? { channel: 'web' as const } : {}),
      caller: callerUser(req.from.uri) ?? 'anonymous',
      trunkId: s.trunk?.id ?? null,
      recipeId: n.recipeId,
      language: n.language,
      matchedBy: s.matchedBy ?? 'request-uri',
      transport: sreq.flow.transport,
      remoteAddress: s.source ?? sreq.flow.remote.address,
      startedAt: deps.clock.now(),
    };
    const timer = s.timer?.kind === 'active' ? s.timer : undefined;
    dialog.accept(sreq, s.answerSdp, timer?.headers);
    observeAnswer('inbound', deps.clock.now() - s.arrivedAt);
    const call = new Call(info, dialog, session, {
      maxDurationMs: n.maxCallDurationMinutes * 60_000,
      silenceMs: n.endCallOnSilenceMinutes * 60_000,
      lateOffer: s.lateOffer === true,
      ...(s.sdpPath ? { sdpPath: s.sdpPath } : {}),
    }, deps.clock, deps.logger);
    startSessionTimer(call, timer, deps);
    deps.registry.add(call, s.release ?? (() => undefined));
    if (s.cleanup) void call.ended.finally(s.cleanup);
    s.release = undefined;
    s.session = undefined;
    s.cleanup = undefined;
    call.log.info({ tenantId: info.tenantId, number: info.dialled, matchedBy: info.matchedBy }, 'inbound call answered');
    // The handler runs for the whole call; the INVITE's steps are done once it has the call. The
    // registry keeps it in view, so a drain waits until it has written the call's record.
    deps.registry.track(
      (async () => {
        try {
          await deps.callHandler.handle(call);
        } catch (error) {
          call.log.error({ err: error }, 'call handler failed: ending the call');
          await call.hangup('handler-error');
        }
      })(),
    );
  };

  const srtp = srtpStep({ media: deps.media, logger: deps.logger, retryAfterSeconds: deps.retryAfterSeconds, ...(deps.srtp ? { relay: deps.srtp } : {}) });
  const tail = [enabled, sessionTimer, limits, srtp, media, answer];
  const reg = deps.registered;
  const phone = reg ? [byRegisteredContact(reg, [registeredTrunkStep(reg, deps.directory), ...tail], [source, identify, ...tail])] : [source, identify, ...tail];
  if (!deps.web) return [countInviteOutcome, trying, refuseCallTokens, ...phone];
  const web = webCallSteps({ web: deps.web, media: deps.media, logger: deps.logger, retryAfterSeconds: deps.retryAfterSeconds });
  // A browser's INVITE carries its call token; everything else is a phone call from a trunk.
  return [countInviteOutcome, trying, byCallToken([web.authorize, enabled, sessionTimer, limits, web.media, answer], phone)];
}

