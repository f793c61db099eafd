import type { Clock } from '../../core/clock.js';

/** The node's limits for new calls; each signal is off when its setting is absent. */
export interface CallCapacityLimits {
  /** Calls being set up or up (both directions), new INVITEs waiting to be read included. */
  readonly maxCalls?: number;
  /** New calls taken per second, node-wide (a token bucket whose burst is the same number). */
  readonly maxCallsPerSecond?: number;
  /** Mean event-loop delay (LoopLagMonitor) beyond which new calls are refused while any call is in progress. */
  readonly maxEventLoopLagMs?: number;
  /** Utterances waiting for the recogniser beyond which new calls are refused (with `recogniserQueueDepth`). */
  readonly maxRecogniserQueue?: number;
}

export interface CallCapacityOptions extends CallCapacityLimits {
  readonly clock: Clock;
  /** Calls being set up or up, plus new INVITEs admitted and waiting in the receive queue. */
  readonly callsInProgress: () => number;
  /** The event loop's current mean delay, ms (LoopLagMonitor.lagMs). */
  readonly loopLagMs?: () => number;
  /**
   * Utterances queued for speech recognition across the node. Optional: the long-lived recogniser
   * pool reports it once it exists; until it is wired, this signal is off.
   */
  readonly recogniserQueueDepth?: () => number;
}

/** Why a new call was refused: the `reason` label of vap_sip_requests_shed_total. */
export const capacityReasons = {
  calls: 'node at its call capacity',
  rate: 'node over its call rate',
  lag: 'event loop lagging',
  recogniser: 'recogniser queue full',
} as const;

/**
 * Admission by the node's capacity, not by who sends (docs/sip-stack.md "Admission by
 * capacity"): a new call is taken while the node has room on every signal, checked in this order:
 * calls in progress below `maxCalls`, a token of the call-rate bucket, the event loop's mean
 * delay at most `maxEventLoopLagMs` (not judged while no call is in progress: then nobody can
 * suffer from one more), and the recogniser queue at most `maxRecogniserQueue`. `room()` only
 * looks; `take()` spends the rate token once the call is admitted, so a call refused for another
 * reason (its source over its own rate) costs the node nothing.
 */
export class CallCapacity {
  private tokens: number;
  private at: number;

  constructor(private readonly options: CallCapacityOptions) {
    this.tokens = options.maxCallsPerSecond ?? 0;
    this.at = options.clock.now();
  }

  /** Undefined when a new call fits; else the reason it does not. */
  room(): string | undefined {
    const o = this.options;
    const inProgress = o.callsInProgress();
    if (o.maxCalls !== undefined && inProgress >= o.maxCalls) return capacityReasons.calls;
    if (o.maxCallsPerSecond !== undefined && this.refill() < 1) return capacityReasons.rate;
    if (o.maxEventLoopLagMs !== undefined && o.loopLagMs && inProgress > 0 && o.loopLagMs() > o.maxEventLoopLagMs) return capacityReasons.lag;
    if (o.maxRecogniserQueue !== undefined && o.recogniserQueueDepth && o.recogniserQueueDepth() > o.maxRecogniserQueue) return capacityReasons.recogniser;
    return undefined;
  }

  /** A new call was admitted: it spends a token of the call rate. */
  take(): void {
    if (this.options.maxCallsPerSecond !== undefined) this.tokens = Math.max(0, this.refill() - 1);
  }

  private refill(): number {
    const rate = this.options.maxCallsPerSecond as number;
    const now = this.options.clock.now();
    const elapsed = (now - this.at) / 1000;
    if (elapsed > 0) {
      this.tokens = Math.min(rate, this.tokens + elapsed * rate);
      this.at = now;
    }
    return this.tokens;
  }
}
