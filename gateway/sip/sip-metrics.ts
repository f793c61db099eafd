import { cellCounter, type CellCounter, type CounterCell } from '../../core/metrics.js';

/**
 * SIP message counters for the stack's hot path. Every count is one field increment on a cell
 * looked up by method (a Map of the fixed method set) and status (an array index): no label
 * object, no string building per message (core/metrics.ts cellCounter). Methods outside the set
 * count as `other`, statuses outside 100-699 as `other`, so label values stay few whatever arrives.
 */
export const countedMethods = [
  'INVITE', 'ACK', 'BYE', 'CANCEL', 'OPTIONS', 'REGISTER', 'UPDATE', 'INFO', 'REFER', 'NOTIFY',
  'SUBSCRIBE', 'MESSAGE', 'PRACK', 'PUBLISH',
] as const;

const OTHER = 'other';

class MethodCells {
  private readonly cells = new Map<string, CounterCell>();
  private readonly other: CounterCell;

  constructor(counter: CellCounter) {
    for (const m of countedMethods) this.cells.set(m, counter.cell(m));
    this.other = counter.cell(OTHER);
  }

  of(method: string): CounterCell {
    return this.cells.get(method) ?? this.other;
  }
}

/** Cells by status code for one method, made on first use of each status. */
class StatusCells {
  private readonly byStatus: Array<CounterCell | undefined> = [];
  private otherStatus: CounterCell | undefined;

  constructor(
    private readonly counter: CellCounter,
    private readonly method: string,
  ) {}

  of(status: number): CounterCell {
    if (!(status >= 100 && status <= 699)) return (this.otherStatus ??= this.counter.cell(this.method, OTHER));
    return (this.byStatus[status] ??= this.counter.cell(this.method, String(status)));
  }
}

class MethodStatusCells {
  private readonly methods = new Map<string, StatusCells>();
  private readonly other: StatusCells;

  constructor(counter: CellCounter) {
    for (const m of countedMethods) this.methods.set(m, new StatusCells(counter, m));
    this.other = new StatusCells(counter, OTHER);
  }

  of(method: string, status: number): CounterCell {
    return (this.methods.get(method) ?? this.other).of(status);
  }
}

const requestsReceived = new MethodCells(cellCounter('sip_requests_received_total', 'SIP requests received (retransmissions included), by method', ['method']));
const requestsSent = new MethodCells(cellCounter('sip_requests_sent_total', 'SIP requests sent (first transmissions), by method', ['method']));
const responsesSent = new MethodStatusCells(
  cellCounter('sip_responses_sent_total', 'SIP responses sent (first transmissions, stateless refusals included), by request method and status', ['method', 'status']),
);
const responsesReceived = new MethodStatusCells(
  cellCounter('sip_responses_received_total', 'SIP responses received (retransmissions included), by request method and status', ['method', 'status']),
);
const timeouts = cellCounter(
  'sip_transaction_timeouts_total',
  'SIP transactions ended by a timeout: client Timer B (INVITE) and F (non-INVITE) without a final response, server Timer H without the ACK for a final response (RFC 3261 sec. 17)',
  ['timer', 'method'],
);
const timerB = timeouts.cell('B', 'INVITE');
const timerH = timeouts.cell('H', 'INVITE');
const timerF = new Map<string, CounterCell>();

export function countRequestReceived(method: string): void {
  requestsReceived.of(method).value++;
}

export function countRequestSent(method: string): void {
  requestsSent.of(method).value++;
}

export function countResponseSent(method: string, status: number): void {
  responsesSent.of(method, status).value++;
}

export function countResponseReceived(method: string, status: number): void {
  responsesReceived.of(method, status).value++;
}

/** Timer B: an INVITE client transaction got no final response. */
export function countInviteTimeout(): void {
  timerB.value++;
}

/** Timer H: an INVITE server transaction's 3xx-6xx was never ACKed. */
export function countAckTimeout(): void {
  timerH.value++;
}

/** Timer F: a non-INVITE client transaction got no final response. */
export function countNonInviteTimeout(method: string): void {
  const m = (countedMethods as readonly string[]).includes(method) ? method : OTHER;
  let cell = timerF.get(m);
  if (!cell) {
    cell = timeouts.cell('F', m);
    timerF.set(m, cell);
  }
  cell.value++;
}

const shed = cellCounter(
  'sip_requests_shed_total',
  'SIP requests the abuse guard refused (503 + Retry-After) or dropped unanswered, by action and reason (a fixed set: docs/sip-stack.md)',
  ['action', 'reason'],
);
const shedCells = { refused: new Map<string, CounterCell>(), dropped: new Map<string, CounterCell>() };

/** A request the abuse guard refused or dropped; `reason` is one of the guard's constant reasons. */
export function countShed(action: 'refused' | 'dropped', reason: string): void {
  const cells = shedCells[action];
  let cell = cells.get(reason);
  if (!cell) {
    cell = shed.cell(action, reason);
    cells.set(reason, cell);
  }
  cell.value++;
}
