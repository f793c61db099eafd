import type { SipMessage } from '../message/message.js';
import type { SipParseError } from '../message/errors.js';

/** Transport tokens as they appear in Via (RFC 3261 sec. 18; RFC 7118 sec. 5 adds WS/WSS). */
export type TransportName = 'UDP' | 'TCP' | 'TLS' | 'WS' | 'WSS';

export interface Endpoint {
  readonly address: string;
  readonly port: number;
  /**
   * TLS only: the SIP domain the address was resolved for (the URI's host, never an SRV target:
   * RFC 5922 sec. 4). Sent as SNI and checked against the peer's certificate; without it (an IP
   * literal) the certificate must name the address.
   */
  readonly serverName?: string;
}

/**
 * One path to a peer: a UDP socket plus the peer's address, or one connection. Sending a message
 * on a flow serialises it; a failure throws (the transaction layer turns that into a transport
 * error, RFC 3261 sec. 17.1.4 / 17.2.4).
 */
export interface Flow {
  readonly transport: TransportName;
  /** TCP, TLS and WebSocket deliver in order and need no retransmissions (sec. 17.1.1.2). */
  readonly reliable: boolean;
  readonly local: Endpoint;
  readonly remote: Endpoint;
  /** True when the transport is secured (TLS, WSS), so a sips: Request-URI is acceptable. */
  readonly secure: boolean;
  /**
   * Throws when the flow cannot send now; `onLateFailure` hears of a failure found afterwards (a
   * connection refused, a TLS handshake or a write that failed), so a transaction ends at once
   * (sec. 17.1.4) instead of at Timer B or F, 32 s later.
   */
  send(message: SipMessage, onLateFailure?: (error: Error) => void): void;
  /** Sends serialized octets as they are (UDP only; see TransactionTransport.sendWire). */
  sendWire?(wire: Buffer): void;
  /** False once the connection closed; UDP flows never close. */
  readonly open: boolean;
}

export type TransportEvent =
  | { readonly kind: 'message'; readonly message: SipMessage; readonly flow: Flow }
  /** Well framed but malformed: the UA answers 400/505 when the error allows it. */
  | { readonly kind: 'invalid'; readonly error: SipParseError; readonly flow: Flow };

export type TransportListener = (event: TransportEvent) => void;

/** A bound listener (UDP socket pair, TCP/TLS server, WebSocket server). */
export interface SipTransport {
  readonly name: TransportName;
  readonly local: Endpoint;
  /** A flow to send a request to `target` on: reuses a connection where one exists (sec. 18.1.1). */
  flowTo(target: Endpoint): Flow;
  close(): Promise<void>;
}

/** Sends octets to the flow's remote address at `port` (a stateless answer; sec. 18.2.2 picks the port). */
export type Reply = (wire: Buffer, port: number, flow: Flow) => void;
