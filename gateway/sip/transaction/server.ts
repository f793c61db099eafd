import { timerLane } from '../../../core/clock-lane.js';
import { createResponse } from '../message/response.js';
import { serialize } from '../message/serializer.js';
import type { SipRequest, SipResponse } from '../message/message.js';
import { countAckTimeout, countResponseSent } from '../sip-metrics.js';
import { TransactionBase } from './base.js';
import type {
  InviteServerState,
  NonInviteServerState,
  ServerTransactionUser,
  TransactionOptions,
  TransactionTransport,
} from './types.js';

/**
 * INVITE server transaction, RFC 3261 sec. 17.2.1 with RFC 6026 sec. 7.1.
 * Proceeding -> (2xx) Accepted -> Timer L -> Terminated: retransmitted INVITEs are absorbed
 * while the TU retransmits its 2xx through `respond` until the ACK reaches it.
 * Proceeding -> (300-699) Completed -> (ACK) Confirmed -> Timer I -> Terminated, with Timer G
 * retransmitting the final response and Timer H giving up on the ACK.
 */
export class InviteServerTransaction extends TransactionBase<InviteServerState> {
  private lastResponse: SipResponse | undefined;
  private req: SipRequest | undefined;

  constructor(
    request: SipRequest,
    transport: TransactionTransport,
    readonly tu: ServerTransactionUser,
    options: TransactionOptions,
  ) {
    super('proceeding', transport, options);
    this.req = request;
    // RFC 3261 sec. 17.2.1: send 100 unless the TU answers within 200 ms. A lane shared by all
    // INVITEs: a TU that answers at once costs an array slot, not a clock timer.
    this.startLane(timerLane(options.clock, 200));
  }

  /** The INVITE; released once a final response went out (nothing after that needs it). */
  get request(): SipRequest | undefined {
    return this.req;
  }

  /** Timer "trying" in Proceeding; a wait timer (L, I) otherwise. */
  protected override laneExpired(): void {
    if (this.state !== 'proceeding') super.laneExpired();
    else if (!this.lastResponse && this.req) {
      countResponseSent('INVITE', 100, this.transport.transport);
      this.respond(createResponse(this.req, 100));
    }
  }

  respond(res: SipResponse): void {
    const s = this.state;
    if (res.status >= 200 && res.status < 300 && s === 'accepted') {
      this.send(res);
      return;
    }
    if (s !== 'proceeding') return;
    this.stopLane();
    this.lastResponse = res;
    if (!this.send(res)) return;
    if (res.status < 200) return;
    this.req = undefined;
    this.tu.answered?.();
    if (res.status < 300) {
      // RFC 6026 sec. 7.1: Accepted absorbs INVITE retransmissions without answering them, and
      // the TU sends its own 2xx retransmissions, so the response need not be kept for Timer L.
      this.lastResponse = undefined;
      this.setState('accepted');
      this.terminateAfter(64 * this.t.T1);
      return;
    }
    this.setState('completed');
    this.retransmitEvery('G', this.t.T1, this.t.T2, () => {
      if (this.state === 'completed') this.send(res);
    });
    this.timers.start('H', 64 * this.t.T1, () => {
      if (this.state !== 'completed') return;
      countAckTimeout();
      this.tu.timeout?.();
      this.terminate();
    });
  }

  /** A request matching this transaction: an INVITE retransmission or an ACK. */
  receiveRequest(req: SipRequest): void {
    const s = this.state;
    if (req.method === 'ACK') {
      if (s === 'completed') {
        this.timers.stop('G');
        this.timers.stop('H');
        this.setState('confirmed');
        this.lastResponse = undefined;
        this.terminateAfter(this.transport.reliable ? 0 : this.t.T4);
      } else if (s === 'accepted') {
        this.tu.ack?.(req);
      }
      return;
    }
    if ((s === 'proceeding' || s === 'completed') && this.lastResponse) this.send(this.lastResponse);
  }

  protected onTransportError(error: unknown): void {
    this.tu.transportError?.(error);
  }

  protected onTerminated(): void {
    this.tu.terminated?.();
  }
}

/** Non-INVITE server transaction, RFC 3261 sec. 17.2.2 (Timer J). */
export class NonInviteServerTransaction extends TransactionBase<NonInviteServerState> {
  private lastResponse: SipResponse | undefined;
  /** The final response as sent, kept for Timer J instead of the message (datagram transports). */
  private finalWire: Buffer | undefined;
  private req: SipRequest | undefined;

  constructor(
    request: SipRequest,
    transport: TransactionTransport,
    private readonly tu: ServerTransactionUser,
    options: TransactionOptions,
  ) {
    super('trying', transport, options);
    this.req = request;
  }

  /** The request; released once the final response went out (only that response is kept for Timer J). */
  get request(): SipRequest | undefined {
    return this.req;
  }

  respond(res: SipResponse): void {
    const s = this.state;
    if (s !== 'trying' && s !== 'proceeding') return;
    if (res.status >= 200 && this.transport.sendWire && !this.transport.reliable) {
      // Timer J keeps the response for 64*T1: the octets cost far less to hold than the message.
      const wire = serialize(res);
      this.lastResponse = undefined;
      this.finalWire = wire;
      if (!this.sendSerialized(wire)) return;
    } else {
      this.lastResponse = res;
      if (!this.send(res)) return;
    }
    if (res.status < 200) {
      this.setState('proceeding');
      return;
    }
    this.setState('completed');
    this.req = undefined;
    this.terminateAfter(this.transport.reliable ? 0 : 64 * this.t.T1);
  }

  receiveRequest(_req: SipRequest): void {
    // Trying: absorbed; Proceeding/Completed: the last response again (RFC 3261 sec. 17.2.2).
    if (this.state !== 'proceeding' && this.state !== 'completed') return;
    if (this.finalWire) this.sendSerialized(this.finalWire);
    else if (this.lastResponse) this.send(this.lastResponse);
  }

  protected onTransportError(error: unknown): void {
    this.tu.transportError?.(error);
  }

  protected onTerminated(): void {
    this.tu.terminated?.();
  }
}
