import { planDigit, type DtmfDigit, type EventPacketPlan } from '../dtmf/rfc4733.js';

interface DtmfJob {
  readonly plan: EventPacketPlan[];
  index: number;
  /** The event's RTP timestamp, fixed at its first packet; -1 until then. */
  timestamp: number;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/** One 20 ms slot given to a telephone event instead of audio. */
export interface EventSlot {
  /** The packet to send in this slot (absent for an empty plan: the slot stays silent). */
  readonly step: EventPacketPlan | undefined;
  /** RFC 4733 sec. 2.5.1.2: every packet of one event carries the event's start timestamp. */
  readonly timestamp: number;
}

/**
 * The digits a session sends as RFC 4733 telephone events, one after another with a 40 ms gap
 * (two slots of audio or silence) between them; each digit's promise settles when its last
 * packet went, or with the error that stopped the session from sending.
 */
export class DtmfSender {
  private jobs: DtmfJob[] = [];
  private gapTicks = 0;

  /** Events are queued or just ended: audio sent early would jump ahead of them. */
  get busy(): boolean {
    return this.jobs.length > 0 || this.gapTicks > 0;
  }

  send(digits: readonly DtmfDigit[], durationMs: number): Promise<void> {
    const sent = digits.map(
      (digit) =>
        new Promise<void>((resolve, reject) => {
          this.jobs.push({ plan: planDigit(digit, durationMs), index: 0, timestamp: -1, resolve, reject });
        }),
    );
    return Promise.all(sent).then(() => undefined);
  }

  /**
   * This slot's event packet, or undefined when the slot carries audio: between digits, with
   * nothing queued, or while the peer has no telephone-event payload type (`canSend` false).
   */
  take(slotTimestamp: number, canSend: boolean): EventSlot | undefined {
    const job = this.gapTicks > 0 ? undefined : this.jobs[0];
    if (this.gapTicks > 0) this.gapTicks--;
    if (!job || !canSend) return undefined;
    const step = job.plan[job.index];
    if (step && job.timestamp < 0) job.timestamp = slotTimestamp;
    const slot = { step, timestamp: job.timestamp };
    if (++job.index >= job.plan.length) {
      this.jobs.shift();
      this.gapTicks = 2;
      job.resolve();
    }
    return slot;
  }

  /** Every queued digit fails with `error` (the session closed, or stopped sending). */
  rejectAll(error: unknown): void {
    const jobs = this.jobs;
    this.jobs = [];
    for (const job of jobs) job.reject(error);
  }
}
