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

/** Transports as labels (lower case); anything else, e.g. a caller that does not know it, is `other`. */
export const countedTransports = ['udp', 'tcp', 'tls', 'ws', 'wss'] as const;

class MethodCells {
  private readonly cells = new Map<string, CounterCell>();
  private readonly other: CounterCell;

  constructor(counter: CellCounter, transport: string) {
    for (const m of countedMethods) this.cells.set(m, counter.cell(m, transport));
    this.other = counter.cell(OTHER, transport);
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
    private readonly transport: string,
  ) {}

  of(status: number): CounterCell {
    if (!(status >= 100 && status <= 699)) return (this.otherStatus ??= this.counter.cell(this.method, OTHER, this.transport));
    return (this.byStatus[status] ??= this.counter.cell(this.method, String(status), this.transport));
  }
}

class MethodStatusCells {
  private readonly methods = new Map<string, StatusCells>();
  private readonly other: StatusCells;

  constructor(counter: CellCounter, transport: string) {
    for (const m of countedMethods) this.methods.set(m, new StatusCells(counter, m, transport));
    this.other = new StatusCells(counter, OTHER, transport);
  }

  of(method: string, status: number): CounterCell {
    return (this.methods.get(method) ?? this.other).of(status);
  }
}

/**
 * One set of cells per transport, found by the flow's transport name (`UDP`, `TLS`...) in a Map of
 * five: one more lookup per message, still no string built.
 */
class ByTransport<T> {
  private readonly sets = new Map<string, T>();
  private readonly other: T;

  constructor(make: (transport: string) => T) {
    for (const t of countedTransports) this.sets.set(t.toUpperCase(), make(t));
    this.other = make(OTHER);
  }

  of(transport: string | undefined): T {
    return (transport === undefined ? undefined : this.sets.get(transport)) ?? this.other;
  }
}

const requestsReceivedCounter = cellCounter('sip_requests_received_total', 'SIP requests received (retransmissions included), by method and transport', ['method', 'transport']);
const requestsSentCounter = cellCounter('sip_requests_sent_total', 'SIP requests sent (first transmissions), by method and transport', ['method', 'transport']);
const responsesSentCounter = cellCounter(
  'sip_responses_sent_total',
  'SIP responses sent (first transmissions, stateless refusals included), by request method, status and transport',
  ['method', 'status', 'transport'],
);
const responsesReceivedCounter = cellCounter(
  'sip_responses_received_total',
  'SIP responses received (retransmissions included), by request method, status and transport',
  ['method', 'status', 'transport'],
);
const requestsReceived = new ByTransport((t) => new MethodCells(requestsReceivedCounter, t));
const requestsSent = new ByTransport((t) => new MethodCells(requestsSentCounter, t));
const responsesSent = new ByTransport((t) => new MethodStatusCells(responsesSentCounter, t));
const responsesReceived = new ByTransport((t) => new MethodStatusCells(responsesReceivedCounter, t));
const timeouts = cellCounter(
  'sip_transaction_timeouts_total',
  'SIP transactions ended by a timeout: client Timer B (INVITE) and F (non-INVITE) without a final response, server Timer H without the ACK for a final response (RFC 3261 sec. 17)',
  ['timer', 'method'],
);
const timerB = timeouts.cell('B', 'INVITE');
const timerH = timeouts.cell('H', 'INVITE');
const timerF = new Map<string, CounterCell>();

/** `transport` is the flow's name (`UDP`, `TCP`, `TLS`, `WS`, `WSS`); undefined counts as `other`. */
export function countRequestReceived(method: string, transport: string | undefined): void {
  requestsReceived.of(transport).of(method).value++;
}

export function countRequestSent(method: string, transport: string | undefined): void {
  requestsSent.of(transport).of(method).value++;
}

export function countResponseSent(method: string, status: number, transport: string | undefined): void {
  responsesSent.of(transport).of(method, status).value++;
}

export function countResponseReceived(method: string, status: number, transport: string | undefined): void {
  responsesReceived.of(transport).of(method, status).value++;
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
