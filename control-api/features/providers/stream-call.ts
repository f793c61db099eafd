import type { Clock, TimerHandle } from '../../../core/clock.js';
import type { Logger } from '../../../core/logger.js';
import type { ActiveCall, InboundCallInfo } from '../../../core/ports/call-handler.js';
import type { CallCompletion } from '../../../core/ports/originator.js';
import { CallLifecycle } from '../../../core/call-lifecycle.js';
import type { StreamMediaSession, StreamTransport } from '../../../media/stream/stream-media-session.js';

/** What the provider's REST API does for a call the platform holds through a media stream. */
export interface StreamCallControl {
  /** Ends the call at the provider. Rejections are logged by the call, which ends anyway. */
  hangup(): Promise<void>;
}

/** One connected media stream of the call: how the call closes it. */
export interface AttachedStream {
  readonly transport: StreamTransport;
  /** Closes the WebSocket (RFC 6455 sec. 7.4.1 code and a reason). */
  close(code: number, reason: string): void;
}

export interface StreamCallLimits {
  /** Spec: Max call duration with AI; the call is hung up when it is reached. */
  readonly maxDurationMs: number;
  /** Spec: End Call on Silence (no caller speech for this long); 0 disables. */
  readonly silenceMs: number;
  /** A stream that dropped without the call ending may reconnect within this long. */
  readonly reconnectGraceMs: number;
}

export type StreamCallState = 'active' | 'reconnecting' | 'transferring' | 'ending' | 'ended';

/**
 * A call held at a cloud telephony provider and carried to us over its media stream: the
 * `ActiveCall` the recipe runtime gets, like the SIP gateway's `Call`, with the same timers
 * (max duration, end call on silence, no caller audio) and one AbortSignal for every task of the
 * call. The stream may drop and come back (the provider asks what to do next and we answer with
 * a new stream to the same call) or leave for a transfer; only the provider saying the call is
 * over, our hang-up, a limit, or a broken stream ends it.
 */
export class StreamCall extends CallLifecycle implements ActiveCall {
  readonly ended: Promise<CallCompletion>;
  private resolveEnded!: (c: CallCompletion) => void;
  private graceTimer: TimerHandle | undefined;
  private stream: AttachedStream | undefined;
  private endReason: string | undefined;
  state: StreamCallState = 'active';

  constructor(
    readonly info: InboundCallInfo,
    readonly media: StreamMediaSession,
    private readonly limits: StreamCallLimits,
    private readonly control: StreamCallControl,
    clock: Clock,
    private readonly logger: Logger,
  ) {
    super(clock, limits);
    this.ended = new Promise((resolve) => (this.resolveEnded = resolve));
    this.startLifecycle(media, 'stream', (silentMs) => {
      this.logger.info({ callId: info.id, silentMs }, 'no caller audio on the media stream: ending the call');
      void this.hangup('media-timeout');
    });
  }

  /**
   * Max call duration and End Call on Silence are limits on the call *with AI* (spec: phone
   * number settings): while the caller is with a transfer target they wait, and apply again if
   * the caller comes back (endTransfer).
   */
  protected limitReached(reason: 'max-duration' | 'caller-silence'): void {
    if (this.state === 'transferring') return;
    void this.hangup(reason);
  }

  /** A stream of this call started (the first, a reconnection, or the return from a failed transfer). */
  streamStarted(stream: AttachedStream): void {
    if (this.state === 'ending' || this.state === 'ended') {
      stream.close(1000, 'the call has ended');
      return;
    }
    this.stream?.close(1000, 'replaced by a new stream');
    this.stream = stream;
    this.media.attach(stream.transport);
    if (this.graceTimer) this.cancel(this.graceTimer);
    this.graceTimer = undefined;
    if (this.state === 'reconnecting') this.logger.info({ callId: this.info.id }, 'media stream reconnected');
    if (this.state !== 'transferring') this.state = 'active';
  }

  /** The provider stopped the stream (its `stop` frame): outside a transfer the call is over. */
  streamStopped(stream: AttachedStream): void {
    if (stream !== this.stream) return;
    this.detach();
    if (this.state === 'active' || this.state === 'reconnecting') void this.finish('remote-bye');
  }

  /**
   * The socket closed without a `stop`: the call may still be up at the provider, which then
   * asks what to do next (a new stream to this call). Ended after the grace without one.
   */
  streamLost(stream: AttachedStream, why: string): void {
    if (stream !== this.stream) return;
    this.detach();
    if (this.state !== 'active') return;
    this.state = 'reconnecting';
    this.logger.warn({ callId: this.info.id, why }, 'media stream lost: waiting for the provider to reconnect it');
    this.graceTimer = this.after(this.limits.reconnectGraceMs, () => {
      this.logger.warn({ callId: this.info.id, graceMs: this.limits.reconnectGraceMs }, 'media stream not reconnected in time: ending the call');
      void this.hangup('stream-lost');
    });
  }

  /** The provider sent what its protocol does not allow: said once, then the call ends cleanly. */
  streamFailed(stream: AttachedStream, problem: string): void {
    if (stream !== this.stream || this.signal.aborted) return;
    this.logger.error({ callId: this.info.id, problem }, 'media stream protocol error: ending the call');
    void this.hangup('stream-error');
  }

  /**
   * The provider reports the call over (a status callback, the caller left during a transfer, or
   * provider B's flow ended it after a transfer attempt). Ends at once: the call's signal aborts
   * before this returns.
   */
  providerEnded(reason = 'remote-bye'): void {
    this.detach();
    void this.finish(reason);
  }

  /** The agent hands the caller to a transfer target: losing the stream no longer ends the call. */
  beginTransfer(): void {
    if (this.state === 'active') this.state = 'transferring';
  }

  /**
   * A transfer that hands the caller over by leaving the provider's flow step (provider B: the
   * Voicebot applet ends when our socket closes, and the flow's next applet dials the target):
   * our stream closes, and the call stays ours, `transferring`, until the provider says how it went.
   */
  releaseStream(reason: string): void {
    if (this.state !== 'transferring' || !this.stream) return;
    this.stream.close(1000, reason);
    this.detach();
  }

  /** The transfer failed and the caller comes back to the agent (on a new stream), or the target took the call. */
  endTransfer(ok: boolean): void {
    if (this.state !== 'transferring') return;
    if (ok) {
      void this.finish('transferred');
      return;
    }
    this.state = this.stream ? 'active' : 'reconnecting';
    if (!this.stream) {
      this.graceTimer = this.after(this.limits.reconnectGraceMs, () => void this.hangup('stream-lost'));
    }
    // The limits waited during the transfer (limitReached): the one that passed meanwhile ends the call now.
    if (this.clock.now() - this.info.startedAt >= this.limits.maxDurationMs) void this.hangup('max-duration');
    else this.noteCallerSpeech();
  }

  async hangup(reason = 'local-bye'): Promise<void> {
    if (this.state === 'ending' || this.state === 'ended') return;
    this.state = 'ending';
    this.endReason = reason;
    this.logger.info({ callId: this.info.id, reason }, 'ending provider call');
    try {
      await this.control.hangup();
    } catch (error) {
      // The caller may already be gone; the call ends on our side regardless.
      this.logger.warn({ callId: this.info.id, err: error instanceof Error ? error.message : String(error) }, 'provider did not confirm the hang-up');
    }
    this.stream?.close(reason === 'stream-error' ? 1007 : 1000, reason);
    this.detach();
    await this.finish(reason);
  }

  private detach(): void {
    if (!this.stream) return;
    this.stream = undefined;
    this.media.detach();
  }

  private async finish(reason: string): Promise<void> {
    if (this.state === 'ended') return;
    this.state = 'ended';
    const why = this.endReason ?? reason;
    this.endLifecycle(why);
    this.stream?.close(1000, why);
    this.stream = undefined;
    try {
      await this.media.close();
    } catch (error) {
      this.logger.warn({ err: error, callId: this.info.id }, 'media session did not close cleanly');
    }
    const endedAt = this.clock.now();
    this.resolveEnded({ endedAt, durationMs: endedAt - this.info.startedAt, reason: why });
  }
}
