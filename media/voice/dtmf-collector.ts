import { systemClock, type Clock, type TimerHandle } from '../../core/clock.js';
import type { DtmfCollection } from '../../core/ports/conversation.js';

export type DtmfCompletion = 'terminator' | 'maxDigits' | 'interDigitTimeout';

/**
 * Gathers RFC 4733 key presses into one answer, the way IVRs do: the entry ends at the
 * terminator key (not part of the digits), at `maxDigits`, or when no key came for
 * `interDigitTimeoutMs`. A terminator pressed alone gives an empty entry ("#" = skip).
 */
export class DtmfCollector {
  private digits = '';
  private active = false;
  private timer: TimerHandle | undefined;
  /** When the last entry ended at `maxDigits` (its last digit): a terminator may still follow. */
  private fullAt: number | undefined;

  constructor(
    private settings: DtmfCollection,
    private readonly onEntry: (digits: string, completion: DtmfCompletion) => void,
    private readonly clock: Clock = systemClock,
  ) {}

  /** Applies to the next entry; an entry already under way keeps going under the new rules. */
  configure(settings: DtmfCollection): void {
    this.settings = settings;
  }

  /**
   * A terminator pressed out of habit right after an entry that ended at its last digit ("123456"
   * then "#" for a six-digit number): not a key of its own. The caller is told the entry is done
   * only by the agent going on, so the '#' comes within the inter-digit time; taken as a key it
   * would cut off the agent's next line (barge-in on a key). The caller of `press` drops it.
   */
  isLateTerminator(digit: string): boolean {
    const { terminator, interDigitTimeoutMs } = this.settings;
    const late = !this.active && terminator !== '' && digit === terminator && this.fullAt !== undefined && this.clock.now() - this.fullAt <= interDigitTimeoutMs;
    this.fullAt = undefined;
    return late;
  }

  press(digit: string): void {
    this.fullAt = undefined;
    this.active = true;
    this.cancelTimer();
    const { terminator, maxDigits, interDigitTimeoutMs } = this.settings;
    if (terminator && digit === terminator) return this.complete('terminator');
    this.digits += digit;
    if (this.digits.length >= maxDigits) return this.complete('maxDigits');
    this.timer = this.clock.setTimeout(() => this.complete('interDigitTimeout'), interDigitTimeoutMs);
  }

  /** True while keys are being entered (a listener should wait for the entry to end). */
  get collecting(): boolean {
    return this.active;
  }

  stop(): void {
    this.cancelTimer();
    this.active = false;
    this.digits = '';
  }

  private cancelTimer(): void {
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private complete(completion: DtmfCompletion): void {
    this.cancelTimer();
    if (completion === 'maxDigits') this.fullAt = this.clock.now();
    const digits = this.digits;
    this.digits = '';
    this.active = false;
    this.onEntry(digits, completion);
  }
}
