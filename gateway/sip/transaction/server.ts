import { createResponse } from '../message/response.js';
import type { SipRequest, SipResponse } from '../message/message.js';
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

  constructor(
    readonly request: SipRequest,
    transport: TransactionTransport,
    private readonly tu: ServerTransactionUser,
    options: TransactionOptions,
  ) {
    super('proceeding', transport, options);
    // RFC 3261 sec. 17.2.1: send 100 unless the TU answers within 200 ms.
    this.timers.start('trying', 200, () => {
      if (!this.lastResponse && this.state === 'proceeding') this.respond(createResponse(this.request, 100));
    });
  }

  respond(res: SipResponse): void {
    const s = this.state;
    if (res.status >= 200 && res.status < 300 && s === 'accepted') {
      this.send(res);
      return;
    }
    if (s !== 'proceeding') return;
    this.timers.stop('trying');
    this.lastResponse = res;
    if (!this.send(res)) return;
    if (res.status < 200) return;
    if (res.status < 300) {
      this.setState('accepted');
      this.timers.start('L', 64 * this.t.T1, () => this.terminate());
      return;
    }
    this.setState('completed');
    this.retransmitEvery('G', this.t.T1, this.t.T2, () => {
      if (this.state === 'completed') this.send(res);
    });
    this.timers.start('H', 64 * this.t.T1, () => {
      if (this.state !== 'completed') return;
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
        this.timers.start('I', this.transport.reliable ? 0 : this.t.T4, () => this.terminate());
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

  constructor(
    readonly request: SipRequest,
    transport: TransactionTransport,
    private readonly tu: ServerTransactionUser,
    options: TransactionOptions,
  ) {
    super('trying', transport, options);
  }

  respond(res: SipResponse): void {
    const s = this.state;
    if (s !== 'trying' && s !== 'proceeding') return;
    this.lastResponse = res;
    if (!this.send(res)) return;
    if (res.status < 200) {
      this.setState('proceeding');
      return;
    }
    this.setState('completed');
    this.timers.start('J', this.transport.reliable ? 0 : 64 * this.t.T1, () => this.terminate());
  }

  receiveRequest(_req: SipRequest): void {
    // Trying: absorbed; Proceeding/Completed: the last response again (RFC 3261 sec. 17.2.2).
    if ((this.state === 'proceeding' || this.state === 'completed') && this.lastResponse) this.send(this.lastResponse);
  }

  protected onTransportError(error: unknown): void {
    this.tu.transportError?.(error);
  }

  protected onTerminated(): void {
    this.tu.terminated?.();
  }
}
