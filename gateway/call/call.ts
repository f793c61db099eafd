import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import { CallLifecycle } from '../../core/call-lifecycle.js';
import type { ActiveCall, InboundCallInfo } from '../../core/ports/call-handler.js';
import type { CallMediaSession } from '../../core/ports/media.js';
import type { CallCompletion } from '../../core/ports/originator.js';
import type { Dialog } from '../sip/dialog/dialog.js';
import { SipError } from '../sip/ua/sip-error.js';
import { directSdpPath, type SdpPath } from './sdp-path.js';

export interface CallLimits {
  /** Hard limit (spec: Max call duration with AI); the gateway sends BYE when it is reached. */
  readonly maxDurationMs: number;
  /** No caller speech for this long ends the call (spec: End Call on Silence); 0 disables. */
  readonly silenceMs: number;
  /** Our offer went in the 200: the ACK must carry the answer (RFC 3264 sec. 5). */
  readonly lateOffer?: boolean;
  /** How later offers and answers reach the media session; straight to it by default (SRTP: through the relay). */
  readonly sdpPath?: SdpPath;
}

export type CallState = 'active' | 'ending' | 'ended';

/**
 * One call: its SIP leg (a dialog), its media session and an AbortSignal that every timer and
 * task of the call hangs off, so a hang-up from either side cancels everything at once.
 */
export class Call extends CallLifecycle implements ActiveCall {
  readonly ended: Promise<CallCompletion>;
  private resolveEnded!: (c: CallCompletion) => void;
  private endReason: string | undefined;
  state: CallState = 'active';
  /** The call's logger: every line carries the call id (the call record's id too) and the SIP Call-ID. */
  readonly log: Logger;
  /** Where re-offers, late answers and session refreshes go (sdp-path.ts). */
  readonly sdp: SdpPath;

  constructor(
    readonly info: InboundCallInfo,
    readonly leg: Dialog,
    readonly media: CallMediaSession,
    private readonly limits: CallLimits,
    clock: Clock,
    logger: Logger,
  ) {
    super(clock, limits);
    this.log = logger.child({ callId: info.id, sipCallId: info.sipCallId });
    leg.callLogger = this.log;
    this.ended = new Promise((resolve) => (this.resolveEnded = resolve));
    this.sdp = limits.sdpPath ?? directSdpPath(media);
    leg.offerHandler = (offer) => this.reoffer(offer);
    leg.on('destroy', ({ reason }) => void this.finish(this.endReason ?? reason));
    leg.on('info', ({ contentType, body }) => this.infoDtmf(contentType, body));
    if (limits.lateOffer) leg.once('confirmed', ({ sdp }) => void this.lateAnswer(sdp));
    this.startLifecycle(media, 'rtp', (silentMs) => {
      this.log.info({ silentMs }, 'no RTP from the caller: ending the call');
      void this.hangup('media-timeout');
    });
  }

  protected limitReached(reason: 'max-duration' | 'caller-silence'): void {
    void this.hangup(reason);
  }

  /** RFC 3264 sec. 8: a re-offer goes to the media session; a refusal becomes 488 (or 400). */
  private async reoffer(offer: string | undefined): Promise<string> {
    if (offer === undefined) return this.sdp.localSdp;
    const result = await this.sdp.answer(offer);
    if (!result.ok) throw new SipError(result.sipStatus, result.message);
    return result.sdp;
  }

  /** The answer to our offer, from the ACK; without a usable one the call cannot have media: BYE. */
  private async lateAnswer(sdp: string | undefined): Promise<void> {
    const result = sdp === undefined ? undefined : await this.sdp.applyAnswer(sdp);
    if (result?.ok) return;
    this.log.info({ reason: result?.ok === false ? result.message : 'ACK without SDP' }, 'late-offer call has no usable answer: ending it');
    void this.hangup('no-sdp-answer');
  }

  /** SIP INFO DTMF (application/dtmf-relay: `Signal=5`, `Duration=160`), for carriers that send it. */
  private infoDtmf(contentType: string | undefined, body: string): void {
    if (!contentType?.toLowerCase().startsWith('application/dtmf-relay')) return;
    const signal = /Signal\s*=\s*([0-9*#A-Da-d])/.exec(body)?.[1];
    if (!signal) return;
    const duration = Number(/Duration\s*=\s*(\d+)/.exec(body)?.[1] ?? 100);
    this.emit('dtmf', { digit: signal.toUpperCase(), durationMs: duration, endSeen: true, via: 'info' });
  }

  async hangup(reason = 'local-bye'): Promise<void> {
    if (this.state !== 'active') return;
    this.state = 'ending';
    this.endReason = reason;
    this.log.info({ reason }, 'ending call with BYE');
    await this.leg.bye('local-bye');
    await this.finish(reason);
  }

  private async finish(reason: string): Promise<void> {
    if (this.state === 'ended') return;
    this.state = 'ended';
    this.endLifecycle(reason);
    try {
      await this.media.close();
    } catch (error) {
      this.log.warn({ err: error }, 'media session did not close cleanly');
    }
    const endedAt = this.clock.now();
    this.resolveEnded({ endedAt, durationMs: endedAt - this.info.startedAt, reason });
  }
}
