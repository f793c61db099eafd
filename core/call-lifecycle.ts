import type { Clock, TimerHandle } from './clock.js';
import type { ActiveCallEvents } from './ports/call-handler.js';
import type { CallMediaSession, MediaDtmfEvent } from './ports/media.js';
import { TypedEmitter } from './typed-emitter.js';

export interface CallLifecycleLimits {
  /** Max call duration. */
  readonly maxDurationMs: number;
  /** End Call on Silence; 0 disables it. */
  readonly silenceMs: number;
}

/**
 * The lifecycle every kind of call shares, a SIP dialog (gateway/call/call.ts) and a cloud
 * provider's stream (providers/stream-call.ts): timers that die with the call, one AbortSignal
 * for every task of it, the max duration and the End Call on Silence timer that caller speech
 * restarts, and the media session's keys and silence followed until the end. A subclass says
 * what a reached limit does (`limitReached`) and calls `endLifecycle` once when the call ends.
 */
export abstract class CallLifecycle extends TypedEmitter<ActiveCallEvents> {
  private readonly aborter = new AbortController();
  private readonly timers = new Set<TimerHandle>();
  private silenceTimer: TimerHandle | undefined;

  protected constructor(
    protected readonly clock: Clock,
    private readonly lifecycleLimits: CallLifecycleLimits,
  ) {
    super();
  }

  /** A limit of the call was reached (a SIP call hangs up; a provider call waits during a transfer). */
  protected abstract limitReached(reason: 'max-duration' | 'caller-silence'): void;

  /** Starts the max duration and silence timers and follows the media session's keys and no-audio timeout. */
  protected startLifecycle(media: Pick<CallMediaSession, 'on' | 'off'>, via: ActiveCallEvents['dtmf'][0]['via'], onMediaTimeout: (silentMs: number) => void): void {
    const onDtmf = (e: MediaDtmfEvent): void => void this.emit('dtmf', { ...e, via });
    const onTimeout = (e: { silentMs: number }): void => onMediaTimeout(e.silentMs);
    media.on('dtmf', onDtmf);
    media.on('timeout', onTimeout);
    this.signal.addEventListener('abort', () => {
      media.off('dtmf', onDtmf);
      media.off('timeout', onTimeout);
    });
    this.after(this.lifecycleLimits.maxDurationMs, () => this.limitReached('max-duration'));
    this.noteCallerSpeech();
  }

  /** Aborted when the call ends for any reason. */
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

  /** Cancels a timer set with `after`. */
  cancel(handle: TimerHandle): void {
    this.clock.clearTimeout(handle);
    this.timers.delete(handle);
  }

  noteCallerSpeech(): void {
    if (this.lifecycleLimits.silenceMs <= 0 || this.signal.aborted) return;
    if (this.silenceTimer) this.cancel(this.silenceTimer);
    this.silenceTimer = this.after(this.lifecycleLimits.silenceMs, () => this.limitReached('caller-silence'));
  }

  /** Every timer stops and every task of the call is aborted with `reason`. */
  protected endLifecycle(reason: string): void {
    for (const t of this.timers) this.clock.clearTimeout(t);
    this.timers.clear();
    this.aborter.abort(new Error(`call ended: ${reason}`));
  }
}
