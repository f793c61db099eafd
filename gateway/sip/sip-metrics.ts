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

/** Also the transport label of a count whose caller does not know the transport. */
const OTHER = 'other';

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
 * One set of cells per transport, picked by the flow's transport name (`UDP`, `TLS`...) with a
 * switch (cheaper than a Map lookup on this path; measured in docs/operations.md): still no string
 * built, no label object.
 */
class ByTransport<T> {
  private readonly udp: T;
  private readonly tcp: T;
  private readonly tls: T;
  private readonly ws: T;
  private readonly wss: T;
  private readonly other: T;

  constructor(make: (transport: string) => T) {
    this.udp = make('udp');
    this.tcp = make('tcp');
    this.tls = make('tls');
    this.ws = make('ws');
    this.wss = make('wss');
    this.other = make(OTHER);
  }

  of(transport: string | undefined): T {
    switch (transport) {
      case 'UDP':
        return this.udp;
      case 'TCP':
        return this.tcp;
      case 'TLS':
        return this.tls;
      case 'WS':
        return this.ws;
      case 'WSS':
        return this.wss;
      default:
        return this.other;
    }
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
