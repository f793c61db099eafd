/**
 * RFC 4733 telephone-events: DTMF digits carried as RTP event packets.
 *
 * Payload (sec. 2.3): event (8 bits) | E (1) | R (1) | volume (6) | duration (16, in timestamp units).
 * All packets of one event share its RTP timestamp (sec. 2.5.1.2), so the receiver keys events by
 * timestamp and does not rely on the marker bit, which some gateways omit or set on every packet.
 */

export type DtmfDigit = '0' | '1' | '2' | '3' | '4' | '5' | '6' | '7' | '8' | '9' | '*' | '#' | 'A' | 'B' | 'C' | 'D';

const digits: readonly DtmfDigit[] = ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '*', '#', 'A', 'B', 'C', 'D'];

/** Sec. 3.2: events 0-15 are the DTMF digits; 16 (flash) is accepted on the wire but not a digit. */
export function eventToDigit(event: number): DtmfDigit | undefined {
  return digits[event];
}

export function digitToEvent(digit: string): number | undefined {
  const index = digits.indexOf(digit.toUpperCase() as DtmfDigit);
  return index === -1 ? undefined : index;
}

export function isDtmfDigit(value: string): value is DtmfDigit {
  return digitToEvent(value) !== undefined && value.length === 1;
}

export interface TelephoneEvent {
  readonly event: number;
  readonly end: boolean;
  readonly volume: number;
  readonly duration: number;
}

export function parseTelephoneEvent(payload: Uint8Array): TelephoneEvent | undefined {
  if (payload.length < 4) return undefined;
  const flags = payload[1] ?? 0;
  return {
    event: payload[0] ?? 0,
    end: (flags & 0x80) !== 0,
    volume: flags & 0x3f,
    duration: ((payload[2] ?? 0) << 8) | (payload[3] ?? 0),
  };
}

export function writeTelephoneEvent(out: Uint8Array, offset: number, e: TelephoneEvent): void {
  out[offset] = e.event & 0xff;
  out[offset + 1] = (e.end ? 0x80 : 0) | (e.volume & 0x3f);
  out[offset + 2] = (e.duration >> 8) & 0xff;
  out[offset + 3] = e.duration & 0xff;
}

export interface DtmfEvent {
  readonly digit: DtmfDigit;
  readonly durationMs: number;
  /** False when the end packets were lost and the event was closed by a newer event or a timeout. */
  readonly endSeen: boolean;
}

interface OpenEvent {
  timestamp: number;
  event: number;
  duration: number;
  lastUpdateAt: number;
  ended: boolean;
}

/**
 * Turns event packets into one `DtmfEvent` per key press: the redundant end packets (sec. 2.5.1.4)
 * and duration updates of the same timestamp are absorbed; a new timestamp closes any open event.
 */
export class DtmfReceiver {
  private current: OpenEvent | undefined;

  constructor(
    private readonly onDigit: (event: DtmfEvent) => void,
    /** An event with no update for this long is closed (its end packets were lost). */
    private readonly staleMs = 300,
  ) {}

  onPacket(timestamp: number, payload: Uint8Array, now: number): void {
    const te = parseTelephoneEvent(payload);
    if (!te) return;
    const current = this.current;
    if (current && current.timestamp === timestamp) {
      if (current.ended) return;
      current.duration = Math.max(current.duration, te.duration);
      current.lastUpdateAt = now;
      if (te.end) this.finish(current, true);
      return;
    }
    if (current && !current.ended) this.finish(current, false);
    const opened: OpenEvent = { timestamp, event: te.event, duration: te.duration, lastUpdateAt: now, ended: false };
    this.current = opened;
    if (te.end) this.finish(opened, true);
  }

  /** Called on the media tick: closes an event whose end packets never came. */
  poll(now: number): void {
    const current = this.current;
    if (current && !current.ended && now - current.lastUpdateAt >= this.staleMs) this.finish(current, false);
  }

  private finish(open: OpenEvent, endSeen: boolean): void {
    open.ended = true;
    const digit = eventToDigit(open.event);
    if (digit) this.onDigit({ digit, durationMs: Math.round(open.duration / 8), endSeen });
  }
}

export interface EventPacketPlan {
  readonly marker: boolean;
  readonly event: TelephoneEvent;
}

/**
 * The packets that carry one digit, one per 20 ms tick (sec. 2.5.1): the first with the marker bit,
 * each with the duration so far, the last (E bit, final duration) sent three times (sec. 2.5.1.4).
 */
export function planDigit(digit: DtmfDigit, durationMs = 100, volume = 10, packetMs = 20): EventPacketPlan[] {
  const event = digitToEvent(digit) ?? 0;
  // The duration field is 16 bits of 8 kHz units: about 8 s at most (sec. 2.5.2.3 covers longer).
  const total = Math.min(0xffff, Math.max(packetMs, Math.round(durationMs / packetMs) * packetMs) * 8);
  const step = packetMs * 8;
  const plan: EventPacketPlan[] = [];
  for (let duration = step; duration < total; duration += step) {
    plan.push({ marker: plan.length === 0, event: { event, end: false, volume, duration } });
  }
  for (let i = 0; i < 3; i++) plan.push({ marker: plan.length === 0, event: { event, end: true, volume, duration: total } });
  return plan;
}
