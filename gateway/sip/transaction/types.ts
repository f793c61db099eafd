import type { Clock } from '../../../core/clock.js';
import type { SipMessage, SipRequest, SipResponse } from '../message/message.js';
import type { TimerValues } from './timers.js';

/** What a transaction needs from the transport layer (RFC 3261 sec. 18). */
export interface TransactionTransport {
  /** Reliable transports (TCP, TLS, WS) get no retransmissions and zero wait timers. */
  readonly reliable: boolean;
  /** The transport's name (`UDP`, `TLS`...), for the message counters; a Flow has it. */
  readonly transport?: string;
  /**
   * Sends a message; throwing means a transport error (RFC 3261 sec. 17.1.4, 17.2.4). A connection
   * that is still being opened fails later: `onLateFailure` hears of it then.
   */
  send(message: SipMessage, onLateFailure?: (error: Error) => void): void;
  /**
   * Sends a message already serialized (datagram transports): a transaction that must repeat a
   * response for 64*T1 then keeps these octets instead of the message and everything it references.
   */
  sendWire?(wire: Buffer): void;
}

export interface TransactionOptions {
  readonly clock: Clock;
  readonly timers?: Partial<TimerValues>;
  /**
   * Wait timers of a second or more (D, J, L, M; I and K at T4) may fire up to this much late,
   * so that many expire in one wake-up: they only end a transaction that is absorbing
   * retransmissions, so lingering a little longer changes nothing on the wire. 0 (exact) by default.
   */
  readonly waitSlackMs?: number;
}

/** The transaction user's side of a client transaction (RFC 3261 sec. 17.1). */
export interface ClientTransactionUser {
  response(res: SipResponse): void;
  /** Timer B or F fired: treated as a 408 (RFC 3261 sec. 8.1.3.1). */
  timeout(): void;
  transportError(error: unknown): void;
  terminated?(): void;
}

/** The transaction user's side of a server transaction (RFC 3261 sec. 17.2). */
export interface ServerTransactionUser {
  /** Timer H fired without an ACK, or sending failed. */
  timeout?(): void;
  transportError?(error: unknown): void;
  /** RFC 6026 sec. 7.1: an ACK matching an INVITE answered 2xx is the TU's business. */
  ack?(ack: SipRequest): void;
  /** An INVITE transaction left Proceeding: its final response went out (a CANCEL can no longer act on it). */
  answered?(): void;
  terminated?(): void;
}

export type InviteClientState = 'calling' | 'proceeding' | 'accepted' | 'completed' | 'terminated';
export type NonInviteClientState = 'trying' | 'proceeding' | 'completed' | 'terminated';
export type InviteServerState = 'proceeding' | 'accepted' | 'completed' | 'confirmed' | 'terminated';
export type NonInviteServerState = 'trying' | 'proceeding' | 'completed' | 'terminated';
