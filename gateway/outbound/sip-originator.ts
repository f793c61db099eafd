import { randomUUID } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import type { CallDirectory, DirectoryNumber } from '../../core/ports/call-directory.js';
import type { InboundCallInfo } from '../../core/ports/call-handler.js';
import type { CallMediaSession, MediaPort } from '../../core/ports/media.js';
import type { OriginateRequest, OriginateResult, Originator } from '../../core/ports/originator.js';
import type { SrtpMode, SrtpRelay } from '../../core/ports/srtp-relay.js';
import type { OutboundTransport, TrunkRoutes } from '../../core/ports/trunk-routes.js';
import { Call } from '../call/call.js';
import { observeAnswer } from '../call/call-metrics.js';
import { countUnansweredCall } from '../call/call-outcomes.js';
import type { SrtpSdpPath } from '../call/sdp-path.js';
import type { CallRegistry } from '../call/call-registry.js';
import { startSessionTimer } from '../call/call-session-timer.js';
import type { ClientCredentials } from '../sip/auth/digest-client.js';
import { DEFAULT_SESSION_TIMER, type SessionTimerPolicy } from '../sip/dialog/session-timer.js';
import type { SipRequest } from '../sip/message/message.js';
import type { Flow } from '../sip/transport/types.js';
import { defaultPort, SipResolver, type SipTarget, type SipTargetResolver } from '../sip/resolve/sip-resolver.js';
import type { SipStack } from '../sip/ua/sip-stack.js';
import { sendInvite, sdpOf, type InviteOutcome } from './invite-client.js';
import { secureOfferFor } from './secure-offer.js';

/** Where a call leaves the platform: a trunk's outbound address or the native telephony stack. */
export interface OutboundRoute {
  readonly host: string;
  readonly port: number;
  readonly transport: OutboundTransport;
  readonly credentials?: ClientCredentials;
  readonly trunkId?: string;
  readonly srtp?: SrtpMode;
}

export interface SipOriginatorOptions {
  readonly stack: SipStack;
  readonly media: MediaPort;
  readonly trunks: TrunkRoutes;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Live calls (shutdown BYEs them); answered outbound calls join it. */
  readonly registry?: CallRegistry;
  /** The caller number's settings (language, max duration, silence limit) when known. */
  readonly directory?: CallDirectory;
  /** The native SIP stack for provider numbers; without it those calls fail with 503. */
  readonly nativeRoute?: OutboundRoute;
  /** Gets every answered call (the recipe runtime); it runs for the whole call. */
  readonly onAnswered?: (call: Call, request: OriginateRequest) => void | Promise<void>;
  /** RFC 4028 session timers asked for in our INVITEs (default 1800 s, Min-SE 90 s). */
  readonly sessionTimer?: SessionTimerPolicy;
  /** Resolves a trunk FQDN to one address (A/AAAA only); when set it replaces the RFC 3263 resolver. */
  readonly resolve?: (host: string) => Promise<string>;
  /** RFC 3263 NAPTR/SRV/A resolution of trunk FQDNs; a SipResolver on the system's DNS by default. */
  readonly resolver?: SipTargetResolver;
  /**
   * Every INVITE goes to this proxy (the SIP edge) with a Route header naming it (RFC 3261 sec.
   * 8.1.2, loose routing per sec. 16.12); the Request-URI stays the trunk's, which the proxy
   * resolves and relays to. No RFC 3263 lookups happen here then.
   */
  readonly outboundProxy?: OutboundProxy;
  /** SDES <-> RTP relay for trunks with `srtp: required` (docs/media.md, SRTP); absent: such calls fail 503. */
  readonly srtp?: SrtpRelay;
}

/** A loose-routing outbound proxy: an IP literal, a port, UDP or TCP. */
export interface OutboundProxy {
  readonly host: string;
  readonly port: number;
  readonly transport: 'udp' | 'tcp';
}

/** `sip:<IP>[:port][;transport=udp|tcp][;lr]` (as the config validates it) as an OutboundProxy. */
export function parseOutboundProxy(uri: string): OutboundProxy {
  const m = /^sip:(\[[0-9a-fA-F:.]+\]|[0-9.]+)(?::(\d{1,5}))?((?:;[^;]+)*)$/i.exec(uri);
  if (!m) throw new Error(`not an outbound proxy URI: ${uri}`);
  const tcp = /;transport=tcp\b/i.test(m[3] ?? '');
  return { host: (m[1] as string).replace(/^\[|\]$/g, ''), port: m[2] ? Number(m[2]) : 5060, transport: tcp ? 'tcp' : 'udp' };
}

/** The Route header value that sends a request through the proxy (lr: it loose-routes, RFC 3261 sec. 19.1.1). */
export function proxyRoute(p: OutboundProxy): string {
  const host = p.host.includes(':') ? `[${p.host}]` : p.host;
  return `<sip:${host}:${p.port};lr${p.transport === 'tcp' ? ';transport=tcp' : ''}>`;
}

const defaultResolve = async (host: string): Promise<string> => (await lookup(host)).address;

/** The flow to a route's address (FQDNs resolved first: the stack itself routes only IP literals). */
export async function routeFlow(stack: SipStack, route: Pick<OutboundRoute, 'host' | 'port' | 'transport'>, resolve = defaultResolve): Promise<Flow> {
  const address = isIP(route.host) ? route.host : await resolve(route.host);
  const host = address.includes(':') ? `[${address}]` : address;
  const t = route.transport.toUpperCase();
  return stack.flowFor(`${route.transport === 'tls' ? 'sips' : 'sip'}:${host}:${route.port}${t === 'UDP' ? '' : `;transport=${t}`}`, undefined, route.host);
}

/**
 * The flow to one resolved target (IP literal, so the stack routes it without DNS). `domain`: the
 * name that was resolved, which a TLS peer's certificate must carry (RFC 5922 sec. 4: the SIP
 * domain, not the SRV target it led to).
 */
export function flowTo(stack: SipStack, t: SipTarget, domain: string): Flow {
  const host = t.address.includes(':') ? `[${t.address}]` : t.address;
  const transport = t.transport.toUpperCase();
  return stack.flowFor(`${t.transport === 'tls' ? 'sips' : 'sip'}:${host}:${t.port}${transport === 'UDP' ? '' : `;transport=${transport}`}`, undefined, domain);
}

/** The Request-URI for an E.164 callee on a route (RFC 3261 sec. 19.1.6, `user=phone`). */
export function e164Uri(e164: string, route: Pick<OutboundRoute, 'host' | 'port' | 'transport'>): string {
  const hostPart = route.host.includes(':') ? `[${route.host}]` : route.host;
  const params = route.transport === 'udp' ? '' : `;transport=${route.transport === 'tls' ? 'tcp' : route.transport}`;
  // A name without a port lets the next hop resolve it by NAPTR/SRV too (RFC 3263 sec. 4.2).
  const port = !isIP(route.host) && route.port === defaultPort(route.transport) ? '' : `:${route.port}`;
  return `${route.transport === 'tls' ? 'sips' : 'sip'}:${e164}@${hostPart}${port};user=phone${params}`;
}

/** How a final response classifies (spec: campaign outcomes; the SIP status is always kept). */
export function classify(outcome: Extract<InviteOutcome, { kind: 'rejected' }>): Exclude<OriginateResult, { outcome: 'answered' }> {
  const { status, reason, cancelled } = outcome;
  if (cancelled === 'aborted') return { outcome: 'failed', ...(status > 0 ? { sipStatus: status } : {}), reason: 'aborted before an answer' };
  if (cancelled === 'ring-timeout' && (status === 487 || status === 408)) return { outcome: 'no-answer', sipStatus: status, reason: 'ring timeout (CANCEL sent)' };
  if (status === 486 || status === 600) return { outcome: 'busy', sipStatus: status, reason };
  if (status === 408 || status === 480) return { outcome: 'no-answer', sipStatus: status, reason };
  if (outcome.challenge) return { outcome: 'failed', sipStatus: status, reason: `authentication failed: ${reason}` };
  return { outcome: 'failed', sipStatus: status, reason };
}

/**
 * The SIP `Originator`: picks the route (the number's custom trunk through the TrunkRoutes port,
 * else the native stack), takes an RTP port and offers SDP, INVITEs (invite-client.ts) and turns
 * the answer into a Call: ACKed dialog, media session with the answer applied, re-INVITE and
 * UPDATE re-offers handled by Call (RFC 3264 sec. 8), `completion` settled on BYE from either side.
 */
export class SipOriginator implements Originator {
  private resolver: SipTargetResolver | undefined;

  constructor(private readonly options: SipOriginatorOptions) {}

  async originate(request: OriginateRequest): Promise<OriginateResult> {
    const result = await this.attempt(request);
    // Answered calls are counted when they end (CallRegistry); the others here, by their status.
    if (result.outcome !== 'answered') countUnansweredCall('outbound', result.outcome, result.sipStatus ?? 0);
    return result;
  }

  private async attempt(request: OriginateRequest): Promise<OriginateResult> {
    if (!/^\+[1-9][0-9]{5,14}$/.test(request.to)) throw new Error(`callee must be E.164, got ${request.to}`);
    const o = this.options;
    // The call's id from the start: the media session, every log line and, once answered, the call
    // record (the control plane stores the call under it) use the same value.
    const callId = randomUUID();
    const log = o.logger.child({ callId, messageId: request.context.messageId, attempt: request.context.attempt });
    const route = await this.routeFor(request);
    if (!route) return { outcome: 'failed', sipStatus: 503, reason: request.from.sipTrunkId ? 'trunk not found' : 'no native outbound route configured' };
    let flows: Flow[];
    try {
      flows = o.outboundProxy ? [await routeFlow(o.stack, o.outboundProxy)] : await this.flowsFor(route);
    } catch (error) {
      log.warn({ err: error, host: route.host }, 'outbound route unreachable');
      return { outcome: 'failed', sipStatus: 503, reason: `no route to ${route.host}`, cause: error };
    }
    if (flows.length === 0) return { outcome: 'failed', sipStatus: 503, reason: `no route to ${route.host} (no DNS records)` };
    let session: CallMediaSession;
    try {
      session = await o.media.offer({ callId });
    } catch (error) {
      log.warn({ err: error }, 'no media session for an outbound call');
      return { outcome: 'failed', sipStatus: 503, reason: 'no media capacity', cause: error };
    }
    const offer = await secureOfferFor(route, { callId, session, relay: o.srtp, viaProxy: o.outboundProxy !== undefined }, log);
    if (!offer.ok) {
      await session.close();
      return { outcome: 'failed', sipStatus: offer.sipStatus, reason: offer.reason, ...(offer.cause !== undefined ? { cause: offer.cause } : {}) };
    }
    const secure = offer.path;
    const relay = secure ? o.srtp : undefined;
    const closeMedia = async (): Promise<void> => {
      await session.close();
      await relay?.release(callId);
    };
    /** The callee's SDP answer to the session (through the relay for SRTP). */
    const applyAnswer = (sdp: string): Promise<{ ok: true } | { ok: false; message: string; sipStatus: 488 | 400 }> =>
      secure ? secure.applyAnswer(sdp) : Promise.resolve(session.applyAnswer(sdp));
    let early: Promise<unknown> = Promise.resolve();
    if (request.beforeInvite) {
      try {
        await request.beforeInvite();
      } catch (error) {
        await closeMedia();
        return { outcome: 'failed', reason: `not dialled: ${error instanceof Error ? error.message : String(error)}` };
      }
    }
    const hostPart = route.host.includes(':') ? `[${route.host}]` : route.host;
    const scheme = route.transport === 'tls' ? 'sips' : 'sip';
    let ringing = false;
    let earlyApplied: string | undefined;
    let outcome: InviteOutcome | undefined;
    let flow = flows[0] as Flow;
    // RFC 3263 sec. 4.3: a 503 or a transaction timeout / transport error (the stack's 408/503)
    // moves on to the next target with the same request on a new branch; any other answer is the callee's.
    let previous: SipRequest | undefined;
    const invitedAt = o.clock.now();
    for (const [i, target] of flows.entries()) {
      flow = target;
      earlyApplied = undefined;
      outcome = await sendInvite(o.stack, {
        requestUri: e164Uri(request.to, route),
        fromUri: `${scheme}:${request.from.e164}@${hostPart}`,
        toUri: `${scheme}:${request.to}@${hostPart}`,
        flow,
        sdp: secure?.localSdp ?? session.localSdp,
        ...(route.credentials ? { credentials: route.credentials } : {}),
        ...(o.outboundProxy ? { headers: [['Route', proxyRoute(o.outboundProxy)]] as const } : {}),
        ringTimeoutMs: request.ringTimeoutMs,
        signal: request.signal,
        sessionTimer: o.sessionTimer ?? DEFAULT_SESSION_TIMER,
        ...(previous ? { previous } : {}),
        onProvisional: (res) => {
          // Early media (RFC 3261 sec. 13.2.1, RFC 3960): the 18x's SDP is the answer; audio may flow now.
          const sdp = sdpOf(res);
          if (sdp && earlyApplied === undefined) {
            earlyApplied = sdp;
            const first = sdp;
            early = applyAnswer(sdp).then((r) => {
              if (!r.ok && earlyApplied === first) earlyApplied = undefined;
            });
          }
          if (!ringing && (res.status === 180 || res.status === 183)) {
            ringing = true;
            request.onRinging?.();
          }
        },
      });
      // A ring timeout that fired while the target was silent (Timer B outlasts it) is a dead target too.
      // A 408 counts only from a silent target (the stack's Timer B): one the callee sent after
      // ringing is its "no answer", and the next target would ring the same callee again.
      const next =
        i + 1 < flows.length &&
        outcome.kind === 'rejected' &&
        (outcome.status === 503 || (outcome.status === 408 && outcome.silent === true)) &&
        (!outcome.cancelled || (outcome.cancelled === 'ring-timeout' && outcome.silent === true)) &&
        !request.signal.aborted;
      if (!next) break;
      previous = outcome.invite;
      log.info({ sipStatus: outcome.kind === 'rejected' ? outcome.status : undefined, target: flow.remote }, 'outbound target failed: trying the next one (RFC 3263 sec. 4.3)');
    }
    if (!outcome) throw new Error('no INVITE was sent');
    if (outcome.kind === 'rejected') {
      await closeMedia();
      // The INVITE's Call-ID goes on the attempt's call record, to find it in a SIP trace.
      const result: OriginateResult = outcome.invite ? { ...classify(outcome), sipCallId: outcome.invite.callId } : classify(outcome);
      log.info({ sipStatus: outcome.status, outcome: result.outcome }, 'outbound call not answered');
      return result;
    }
    const { dialog } = outcome;
    observeAnswer('outbound', o.clock.now() - invitedAt);
    const fail = async (reason: string, sipStatus?: number): Promise<OriginateResult> => {
      await dialog.bye('local-bye');
      await closeMedia();
      return { outcome: 'failed', ...(sipStatus ? { sipStatus } : {}), reason };
    };
    // A 2xx that overtook the CANCEL of an abort was already ended by sendInvite; this is an abort just after the 2xx.
    if (request.signal.aborted) return fail('aborted before an answer');
    if (outcome.answerSdp === undefined) return fail('2xx without an SDP answer', 488);
    await early;
    if (outcome.answerSdp !== earlyApplied) {
      const applied = await applyAnswer(outcome.answerSdp);
      if (!applied.ok) return fail(`SDP answer refused: ${applied.message}`, applied.sipStatus);
    }
    const call = await this.callFor(callId, request, route, dialog, session, flow, log, secure);
    if (relay) void call.ended.finally(() => relay.release(callId));
    // RFC 4028 sec. 7.2, 10: refresh (re-INVITE or UPDATE) or watch for the callee's refreshes.
    startSessionTimer(call, outcome.sessionTimer, { clock: o.clock, sessionTimer: o.sessionTimer ?? DEFAULT_SESSION_TIMER });
    call.log.info({ messageId: request.context.messageId, attempt: request.context.attempt }, 'outbound call answered');
    const onAbort = (): void => void call.hangup('aborted');
    request.signal.addEventListener('abort', onAbort, { once: true });
    void call.ended.then(() => request.signal.removeEventListener('abort', onAbort));
    if (o.onAnswered) {
      const handled = (async () => {
        try {
          await o.onAnswered?.(call, request);
        } catch (error) {
          call.log.error({ err: error }, 'outbound call handler failed: ending the call');
          await call.hangup('handler-error');
        }
      })();
      // A drain waits for the handler too: it writes the call's record after the hang-up.
      o.registry?.track(handled);
    }
    return { outcome: 'answered', sipStatus: outcome.response.status, callId: call.info.id, answeredAt: call.info.startedAt, completion: call.ended };
  }

  private routeFor(request: OriginateRequest): Promise<OutboundRoute | undefined> {
    return this.routeForTrunk(request.from.sipTrunkId);
  }

  /** A trunk's outbound route, or the native stack's for numbers without a trunk. */
  async routeForTrunk(trunkId: string | null | undefined): Promise<OutboundRoute | undefined> {
    if (!trunkId) return this.options.nativeRoute;
    const r = await this.options.trunks.outboundRoute(trunkId);
    return r
      ? { host: r.host, port: r.port, transport: r.transport, trunkId: r.trunkId, ...(r.srtp ? { srtp: r.srtp } : {}), ...(r.credentials ? { credentials: r.credentials } : {}) }
      : undefined;
  }

  /**
   * The flows to try in order: one for an IP literal or a custom `resolve`, else RFC 3263 targets.
   * The trunk form always has a port and transport; the defaults (5060/5061, udp) count as not
   * given, so NAPTR/SRV are used, while another port or tcp/tls limit the lookup (sec. 4.1, 4.2).
   */
  private async flowsFor(route: OutboundRoute): Promise<Flow[]> {
    const o = this.options;
    if (isIP(route.host) || o.resolve) return [await routeFlow(o.stack, route, o.resolve)];
    const resolver = (this.resolver ??= o.resolver ?? new SipResolver());
    const targets = await resolver.resolve(route.host, {
      ...(route.port !== defaultPort(route.transport) ? { port: route.port } : {}),
      ...(route.transport !== 'udp' ? { transport: route.transport } : {}),
    });
    return targets.map((t) => flowTo(o.stack, t, route.host));
  }

  private async callFor(
    callId: string,
    request: OriginateRequest,
    route: OutboundRoute,
    dialog: Call['leg'],
    session: CallMediaSession,
    flow: Flow,
    log: Logger,
    sdpPath: SrtpSdpPath | undefined,
  ): Promise<Call> {
    const o = this.options;
    let number: DirectoryNumber | undefined;
    try {
      number = await o.directory?.numberByE164(request.from.e164);
    } catch (error) {
      // The callee already answered: the call goes on with the defaults rather than being dropped.
      log.warn({ err: error, number: request.from.e164 }, 'number settings lookup failed: the answered call runs with the defaults (en, 30 min, no silence limit)');
    }
    // Outbound calls reuse the inbound call shape: `dialled` is the callee, `caller` our number.
    const info: InboundCallInfo = {
      id: callId,
      sipCallId: dialog.callId,
      tenantId: request.context.tenantId,
      numberId: request.from.phoneNumberId,
      dialled: request.to,
      caller: request.from.e164,
      trunkId: route.trunkId ?? null,
      recipeId: request.context.recipeId,
      language: number?.language ?? 'en',
      matchedBy: 'request-uri',
      transport: flow.transport,
      remoteAddress: flow.remote.address,
      startedAt: o.clock.now(),
    };
    const call = new Call(
      info,
      dialog,
      session,
      {
        maxDurationMs: (number?.maxCallDurationMinutes ?? 30) * 60_000,
        silenceMs: (number?.endCallOnSilenceMinutes ?? 0) * 60_000,
        ...(sdpPath ? { sdpPath } : {}),
      },
      o.clock,
      o.logger,
    );
    o.registry?.add(call, () => undefined, 'outbound');
    return call;
  }
}
