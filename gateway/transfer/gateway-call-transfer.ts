import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import type { CallTransfer, CallTransferOutcome } from '../../core/ports/call-transfer.js';
import type { MediaPort } from '../../core/ports/media.js';
import type { SrtpRelay } from '../../core/ports/srtp-relay.js';
import type { Call } from '../call/call.js';
import type { CallRegistry } from '../call/call-registry.js';
import { directSdpPath, type SdpPath } from '../call/sdp-path.js';
import { sendInvite } from '../outbound/invite-client.js';
import { secureOfferFor } from '../outbound/secure-offer.js';
import { classify, e164Uri, routeFlow, type OutboundRoute, type SipOriginator } from '../outbound/sip-originator.js';
import { isSipUri, parseUri } from '../sip/message/uri.js';
import { SipError } from '../sip/ua/sip-error.js';
import type { SipStack } from '../sip/ua/sip-stack.js';
import { relayAudio, type BridgeStats } from './bridge.js';
import { finalNotifyWaitMs, notifyGraceMs, referTransfer } from './refer.js';

export interface GatewayCallTransferOptions {
  readonly stack: SipStack;
  readonly registry: CallRegistry;
  readonly media: MediaPort;
  /** Trunk routes for E.164 targets (the call's own trunk, else the native stack). */
  readonly originator: SipOriginator;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Ring time of the bridged leg before it is CANCELled (spec: ring duration 15-30 s). */
  readonly ringTimeoutMs?: number;
  /**
   * Wait for a REFER's final NOTIFY after the 202; default `finalNotifyWaitMs` of the stack's
   * timers (64*T1 + 8*T1: 36 s), longer than the transferee's INVITE to a silent target can last.
   */
  readonly referTimeoutMs?: number;
  /** SDES <-> RTP relay for bridge legs to trunks with `srtp: required`; absent: such transfers fail 503. */
  readonly srtp?: SrtpRelay;
}

const E164 = /^\+[1-9][0-9]{5,14}$/;

/**
 * The Transfer block's action (core/ports/call-transfer.ts): a blind REFER (RFC 3515) when the
 * caller's side listed REFER in Allow (RFC 3261 sec. 20.5), falling back to a B2BUA bridge when
 * it did not or refused the REFER; the bridge originates the second leg like an outbound call
 * (digest, ring timeout, classification) and relays both legs' audio. Either leg hanging up ends
 * the other. A failed target leaves the caller on the line with `ok: false` and the SIP status.
 */
export class GatewayCallTransfer implements CallTransfer {
  /** Live bridges by call id, for tests and metrics. */
  readonly bridges = new Map<string, BridgeStats>();

  constructor(private readonly o: GatewayCallTransferOptions) {}

  async transfer(callId: string, target: string, signal: AbortSignal): Promise<CallTransferOutcome> {
    const call = this.o.registry.get(callId);
    if (!call || call.state !== 'active') return { ok: false, reason: 'the call has ended' };
    const resolved = await this.targetOf(call, target);
    if ('reason' in resolved) {
      // A recipe's bad target is the recipe's error, not the gateway's: info, with the parser's words.
      if (resolved.cause !== undefined) this.o.logger.info({ callId, err: resolved.cause }, 'transfer target refused');
      return { ok: false, reason: resolved.reason, ...(resolved.cause !== undefined ? { cause: resolved.cause } : {}) };
    }
    const log = this.o.logger.child({ callId, target: resolved.uri });
    if (call.leg.remoteAllow?.includes('REFER')) {
      const timers = this.o.stack.timerValues;
      const result = await referTransfer(call.leg, resolved.uri, {
        clock: this.o.clock,
        contact: this.o.stack.contactUri(call.leg.flow, call.leg.secure),
        referredBy: call.leg.localUri,
        timeoutMs: this.o.referTimeoutMs ?? finalNotifyWaitMs(timers),
        graceMs: notifyGraceMs(timers),
        signal,
      });
      if (result.kind === 'transferred') {
        log.info('REFER transfer confirmed by the transferee (sipfrag 2xx)');
        // RFC 5589 sec. 6: the transferor leaves once the transferee reached the target.
        await call.hangup('transferred');
        return { ok: true, method: 'refer' };
      }
      if (result.kind === 'failed') {
        log.info({ sipStatus: result.status }, 'REFER transfer failed at the target');
        return { ok: false, reason: result.reason, sipStatus: result.status };
      }
      if (result.kind === 'unconfirmed') {
        log.warn({ why: result.reason }, 'REFER transfer outcome unknown: no final NOTIFY');
        return { ok: false, reason: result.reason, unconfirmed: true };
      }
      log.info({ sipStatus: result.status }, 'REFER refused: bridging instead');
    }
    return this.bridge(call, resolved, signal);
  }

  /** A sip:/sips: URI as given, or an E.164 number through the call's trunk (or the native stack). */
  private async targetOf(call: Call, target: string): Promise<{ uri: string; route: OutboundRoute } | { reason: string; cause?: unknown }> {
    const t = target.trim();
    if (E164.test(t)) {
      const route = await this.o.originator.routeForTrunk(call.info.trunkId);
      if (!route) return { reason: 'no outbound route for the number' };
      return { uri: e164Uri(t, route), route };
    }
    let uri;
    try {
      uri = parseUri(t);
    } catch (error) {
      return { reason: `not a SIP URI or E.164 number: ${t.slice(0, 80)}`, cause: error };
    }
    if (!isSipUri(uri)) return { reason: `unsupported transfer target scheme: ${uri.scheme}` };
    const param = uri.params.get('transport')?.toLowerCase();
    const transport = uri.scheme === 'sips' ? 'tls' : param === 'tcp' || param === 'tls' ? param : 'udp';
    return { uri: t, route: { host: uri.host.replace(/^\[|\]$/g, ''), port: uri.port ?? (transport === 'tls' ? 5061 : 5060), transport } };
  }

  private async bridge(call: Call, target: { uri: string; route: OutboundRoute }, signal: AbortSignal): Promise<CallTransferOutcome> {
    const o = this.o;
    const log = o.logger.child({ callId: call.info.id, target: target.uri });
    let flow;
    try {
      flow = await routeFlow(o.stack, target.route);
    } catch (error) {
      log.warn({ err: error, host: target.route.host }, 'transfer target unreachable: no route');
      return { ok: false, reason: `no route to ${target.route.host}`, sipStatus: 503, cause: error };
    }
    const legId = `${call.info.id}-transfer`;
    let session;
    try {
      session = await o.media.offer({ callId: legId });
    } catch (error) {
      log.warn({ err: error }, 'no media session for the transfer leg');
      return { ok: false, reason: 'no media capacity', sipStatus: 503, cause: error };
    }
    // The target's trunk may require SRTP: the leg then offers RTP/SAVP through the relay, as campaign calls do.
    const secure = await secureOfferFor(target.route, { callId: legId, session, relay: o.srtp, viaProxy: false }, log);
    if (!secure.ok) {
      await session.close();
      log.warn({ why: secure.reason }, 'transfer leg not dialled');
      return { ok: false, reason: secure.reason, sipStatus: secure.sipStatus, ...(secure.cause !== undefined ? { cause: secure.cause } : {}) };
    }
    const sdp: SdpPath = secure.path ?? directSdpPath(session);
    const closeMedia = async (): Promise<void> => {
      await session.close();
      if (secure.path) await o.srtp?.release(legId);
    };
    // Aborting the transfer or losing the caller CANCELs the second leg.
    const stop = new AbortController();
    const onAbort = (): void => stop.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    call.signal.addEventListener('abort', onAbort, { once: true });
    const outcome = await sendInvite(o.stack, {
      requestUri: target.uri,
      fromUri: call.leg.localUri,
      toUri: target.uri.replace(/;user=phone.*$/, ''),
      flow,
      sdp: sdp.localSdp,
      ...(target.route.credentials ? { credentials: target.route.credentials } : {}),
      ringTimeoutMs: o.ringTimeoutMs ?? 30_000,
      signal: stop.signal,
      headers: [['Referred-By', `<${call.leg.localUri}>`]],
    });
    signal.removeEventListener('abort', onAbort);
    call.signal.removeEventListener('abort', onAbort);
    if (outcome.kind === 'rejected') {
      await closeMedia();
      const r = classify(outcome);
      return { ok: false, reason: `transfer target ${r.outcome}${'reason' in r && r.reason ? `: ${r.reason}` : ''}`, ...(r.sipStatus ? { sipStatus: r.sipStatus } : {}) };
    }
    const leg = outcome.dialog;
    const applied = outcome.answerSdp === undefined ? undefined : await sdp.applyAnswer(outcome.answerSdp);
    if (!applied?.ok || call.signal.aborted) {
      await leg.bye('local-bye');
      await closeMedia();
      return { ok: false, reason: call.signal.aborted ? 'the call ended during the transfer' : 'the target answered without a usable SDP answer', sipStatus: 488 };
    }
    // The target's re-offers (hold, codec change) are answered the way the first exchange went.
    leg.offerHandler = async (offer) => {
      if (offer === undefined) return sdp.localSdp;
      const r = await sdp.answer(offer);
      if (!r.ok) throw new SipError(r.sipStatus, r.message);
      return r.sdp;
    };
    const stats = relayAudio(call.media, session, call.signal, () => call.noteCallerSpeech(), log);
    this.bridges.set(call.info.id, stats);
    leg.on('destroy', () => void call.hangup('transfer-target-bye'));
    call.signal.addEventListener('abort', () => {
      this.bridges.delete(call.info.id);
      void leg.bye('local-bye').finally(closeMedia);
    }, { once: true });
    log.info('call bridged to the transfer target (B2BUA)');
    return { ok: true, method: 'bridge' };
  }
}
