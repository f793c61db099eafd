import { timerLane, type LaneEntry, type TimerLane } from '../../../core/clock-lane.js';
import type { Clock } from '../../../core/clock.js';
import type { TimerValues } from '../transaction/timers.js';
import type { ServerRequest } from '../ua/server-request.js';

/** Who gives up when no ACK comes within 64*T1 (RFC 3261 sec. 13.3.1.4). */
export interface AckWaitOwner {
  ackTimeout(): void;
}

/**
 * A UAS waiting for the ACK to its 2xx (RFC 3261 sec. 13.3.1.4): over unreliable transports the
 * 2xx is resent at T1, 2*T1, 4*T1... capped at T2; at 64*T1 without ACK the owner gives up.
 * Retransmissions and the give-up are one schedule on shared clock lanes, so the common case
 * (the ACK comes before T1) costs an array slot rather than two clock timers and closures.
 */
export class AckWait implements LaneEntry {
  private lane: TimerLane | undefined;
  private ticket = 0;
  /** Time waited so far when the current segment ends. */
  private waited = 0;
  private interval: number;
  private readonly limit: number;
  private readonly reliable: boolean;
  private stopped = false;
  /** CSeq number of the INVITE the ACK must carry. */
  readonly seq: number;

  constructor(
    private readonly owner: AckWaitOwner,
    /** The INVITE answered 2xx: its transaction resends the 2xx. */
    private readonly invite: ServerRequest,
    private readonly clock: Clock,
    private readonly t: TimerValues,
  ) {
    this.seq = invite.request.cseq.seq;
    this.reliable = invite.flow.reliable;
    this.limit = 64 * t.T1;
    this.interval = t.T1;
    this.schedule(this.reliable ? this.limit : Math.min(t.T1, this.limit));
  }

  private schedule(ms: number): void {
    this.waited += ms;
    this.lane = timerLane(this.clock, ms);
    this.ticket = this.lane.add(this);
  }

  stop(): void {
    this.stopped = true;
    this.lane?.cancel(this.ticket);
    this.lane = undefined;
  }

  /** LaneEntry: a retransmission falls due, or the wait is over. */
  expire(): void {
    this.lane = undefined;
    if (this.reliable || this.waited >= this.limit) {
      this.owner.ackTimeout();
      return;
    }
    this.invite.retransmitFinal();
    if (this.stopped) return;
    this.interval = Math.min(this.interval * 2, this.t.T2);
    this.schedule(Math.min(this.interval, this.limit - this.waited));
  }
}
