import type { SipRequest, SipResponse } from '../message/message.js';
import { countInviteTimeout, countNonInviteTimeout, countRequestSent } from '../sip-metrics.js';
import { TransactionBase } from './base.js';
import { createNonSuccessAck } from './keys.js';
import type {
  ClientTransactionUser,
  InviteClientState,
  NonInviteClientState,
  TransactionOptions,
  TransactionTransport,
} from './types.js';

/**
 * INVITE client transaction, RFC 3261 sec. 17.1.1 as updated by RFC 6026 sec. 7.2: a 2xx moves
 * it to Accepted (not Terminated), where retransmitted 2xx still reach the TU (which ACKs each)
 * until Timer M; a 300-699 is ACKed here and absorbed until Timer D.
 */
export class InviteClientTransaction extends TransactionBase<InviteClientState> {
  constructor(
    readonly request: SipRequest,
    transport: TransactionTransport,
    private readonly tu: ClientTransactionUser,
    options: TransactionOptions,
  ) {
    super('calling', transport, options);
  }

  start(): void {
    if (!this.send(this.request)) return;
    this.retransmitEvery('A', this.t.T1, undefined, () => this.send(this.request));
    this.timers.start('B', 64 * this.t.T1, () => {
      if (this.state !== 'calling') return;
      countInviteTimeout();
      this.tu.timeout();
      this.terminate();
    });
  }

  receiveResponse(res: SipResponse): void {
    const s = this.state;
    if (s === 'terminated') return;
    if (res.status < 200) {
      if (s === 'calling' || s === 'proceeding') {
        this.timers.stop('A');
        this.timers.stop('B');
        this.setState('proceeding');
        this.tu.response(res);
      }
      return;
    }
    if (res.status < 300) {
      if (s === 'calling' || s === 'proceeding') {
        this.timers.stopAll();
        this.setState('accepted');
        this.terminateAfter(64 * this.t.T1);
        this.tu.response(res);
      } else if (s === 'accepted') {
        // RFC 6026 sec. 7.2: 2xx retransmissions (maybe from other forks) go to the TU.
        this.tu.response(res);
      }
      return;
    }
    if (s === 'calling' || s === 'proceeding') {
      this.timers.stopAll();
      this.setState('completed');
      countRequestSent('ACK', this.transport.transport);
      if (!this.send(createNonSuccessAck(this.request, res))) return;
      this.tu.response(res);
      this.terminateAfter(this.transport.reliable ? 0 : 32_000);
    } else if (s === 'completed') {
      this.send(createNonSuccessAck(this.request, res));
    }
  }

  protected onTransportError(error: unknown): void {
    this.tu.transportError(error);
  }

  protected onTerminated(): void {
    this.tu.terminated?.();
  }
}

/** Non-INVITE client transaction, RFC 3261 sec. 17.1.2 (Timers E, F, K). */
export class NonInviteClientTransaction extends TransactionBase<NonInviteClientState> {
  constructor(
    readonly request: SipRequest,
    transport: TransactionTransport,
    private readonly tu: ClientTransactionUser,
    options: TransactionOptions,
  ) {
    super('trying', transport, options);
  }

  start(): void {
    if (!this.send(this.request)) return;
    this.scheduleE(this.t.T1);
    this.timers.start('F', 64 * this.t.T1, () => {
      countNonInviteTimeout(this.request.method);
      this.tu.timeout();
      this.terminate();
    });
  }

  private scheduleE(interval: number): void {
    if (this.transport.reliable) return;
    this.timers.start('E', interval, () => {
      if (!this.send(this.request)) return;
      // In Proceeding the interval stays at T2 (RFC 3261 sec. 17.1.2.2).
      this.scheduleE(this.state === 'proceeding' ? this.t.T2 : Math.min(2 * interval, this.t.T2));
    });
  }

  receiveResponse(res: SipResponse): void {
    const s = this.state;
    if (s !== 'trying' && s !== 'proceeding') return;
    if (res.status < 200) {
      this.setState('proceeding');
      this.tu.response(res);
      return;
    }
    this.timers.stopAll();
    this.setState('completed');
    this.tu.response(res);
    this.terminateAfter(this.transport.reliable ? 0 : this.t.T4);
  }

  protected onTransportError(error: unknown): void {
    this.tu.transportError(error);
  }

  protected onTerminated(): void {
    this.tu.terminated?.();
  }
}
