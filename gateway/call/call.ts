import type { Clock, TimerHandle } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import { TypedEmitter } from '../../core/typed-emitter.js';
import type { ActiveCall, ActiveCallEvents, InboundCallInfo } from '../../core/ports/call-handler.js';
import type { CallMediaSession, MediaDtmfEvent } from '../../core/ports/media.js';
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
export class Call extends TypedEmitter<ActiveCallEvents> implements ActiveCall {
  readonly ended: Promise<CallCompletion>;
  private readonly aborter = new AbortController();
  private resolveEnded!: (c: CallCompletion) => void;
  private readonly timers = new Set<TimerHandle>();
  private silenceTimer: TimerHandle | undefined;
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
    private readonly clock: Clock,
    logger: Logger,
  ) {
    super();
    this.log = logger.child({ callId: info.id, sipCallId: info.sipCallId });
    leg.callLogger = this.log;
    this.ended = new Promise((resolve) => (this.resolveEnded = resolve));
    this.sdp = limits.sdpPath ?? directSdpPath(media);
    leg.offerHandler = (offer) => this.reoffer(offer);
    leg.on('destroy', ({ reason }) => void this.finish(this.endReason ?? reason));
    leg.on('info', ({ contentType, body }) => this.infoDtmf(contentType, body));
    if (limits.lateOffer) leg.once('confirmed', ({ sdp }) => void this.lateAnswer(sdp));
    const onDtmf = (e: MediaDtmfEvent): void => void this.emit('dtmf', { ...e, via: 'rtp' });
    const onTimeout = (e: { silentMs: number }): void => {
      this.log.info({ silentMs: e.silentMs }, 'no RTP from the caller: ending the call');
      void this.hangup('media-timeout');
    };
    media.on('dtmf', onDtmf);
    media.on('timeout', onTimeout);
    this.signal.addEventListener('abort', () => {
      media.off('dtmf', onDtmf);
      media.off('timeout', onTimeout);
    });
    this.after(limits.maxDurationMs, () => void this.hangup('max-duration'));
    this.noteCallerSpeech();
  }

  get signal(): AbortSignal {
    return this.aborter.signal;
  }

  /** A timer that dies with the call. */
  after(ms: number, fire: () => void): TimerHandle {
    const handle = this.clock.setTimeout(() => {
      this.timers.delete(handle);
      if (!this.signal.aborted) fire();
    }, ms);
    this.timers.add(handle);
    return handle;
  }

  noteCallerSpeech(): void {
    if (this.limits.silenceMs <= 0 || this.signal.aborted) return;
    if (this.silenceTimer) {
      this.clock.clearTimeout(this.silenceTimer);
      this.timers.delete(this.silenceTimer);
    }
    this.silenceTimer = this.after(this.limits.silenceMs, () => void this.hangup('caller-silence'));
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
    for (const t of this.timers) this.clock.clearTimeout(t);
    this.timers.clear();
    this.aborter.abort(new Error(`call ended: ${reason}`));
    try {
      await this.media.close();
    } catch (error) {
      this.log.warn({ err: error }, 'media session did not close cleanly');
    }
    const endedAt = this.clock.now();
    this.resolveEnded({ endedAt, durationMs: endedAt - this.info.startedAt, reason });
  }
}
