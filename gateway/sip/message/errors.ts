/**
 * Raw copies of the header fields RFC 3261 sec. 8.2.6.2 needs to answer a request, kept even when
 * the request itself is malformed, so a 400 (or 505) can still be sent back along the top Via.
 */
export interface ResponseBasis {
  readonly method: string;
  /** Every Via header field value, in order (RFC 3261 sec. 8.2.6.2: copied verbatim). */
  readonly vias: readonly string[];
  readonly from?: string;
  readonly to?: string;
  readonly callId?: string;
  readonly cseq?: string;
  readonly timestamp?: string;
}

export interface SipParseErrorOptions {
  /** SIP status a UAS should answer with: 400 unless the RFC names another (505, 501). */
  readonly status?: number;
  /** Present when enough of a request was read to build a response. */
  readonly basis?: ResponseBasis;
  /** On a stream the framing is lost: the connection must be closed (RFC 3261 sec. 18.3). */
  readonly fatal?: boolean;
}

/** The only error the parser throws for bad input; anything else is a bug. */
export class SipParseError extends Error {
  readonly status: number;
  readonly basis: ResponseBasis | undefined;
  readonly fatal: boolean;

  constructor(
    readonly reason: string,
    options: SipParseErrorOptions = {},
  ) {
    super(reason);
    this.name = 'SipParseError';
    this.status = options.status ?? 400;
    this.basis = options.basis;
    this.fatal = options.fatal ?? false;
  }

  /** Whether a response can be sent: only requests are answered, and only with a Via to follow. */
  get canRespond(): boolean {
    return this.basis !== undefined && this.basis.vias.length > 0;
  }
}
