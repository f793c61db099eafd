import type { Headers } from './headers.js';
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
  /**
   * The header field at fault, canonically spelled (`To`, `CSeq`), or `Request-URI`: it names the
   * 400 precisely ("Bad To Header", "Missing Contact Header").
   */
  readonly header?: string;
  /** The header is absent rather than malformed. */
  readonly missing?: boolean;
}

/** The only error the parser throws for bad input; anything else is a bug. */
export class SipParseError extends Error {
  readonly status: number;
  readonly basis: ResponseBasis | undefined;
  readonly fatal: boolean;
  readonly header: string | undefined;
  readonly missing: boolean;

  constructor(
    readonly reason: string,
    options: SipParseErrorOptions = {},
  ) {
    super(reason);
    this.name = 'SipParseError';
    this.status = options.status ?? 400;
    this.basis = options.basis;
    this.fatal = options.fatal ?? false;
    this.header = options.header;
    this.missing = options.missing ?? false;
  }

  /** The same error, attributed to `header` unless it already names one. */
  inHeader(header: string): SipParseError {
    if (this.header !== undefined) return this;
    return new SipParseError(this.reason, { status: this.status, ...(this.basis ? { basis: this.basis } : {}), fatal: this.fatal, header, missing: this.missing });
  }

  /** Whether a response can be sent: only requests are answered, and only with a Via to follow. */
  get canRespond(): boolean {
    return this.basis !== undefined && this.basis.vias.length > 0;
  }
}

/** What a response to this request copies from it (RFC 3261 sec. 8.2.6.2), read from its headers. */
export function basisOf(method: string, h: Headers): ResponseBasis {
  return {
    method,
    vias: h.getAll('via'),
    from: h.get('from'),
    to: h.get('to'),
    callId: h.get('call-id'),
    cseq: h.get('cseq'),
    timestamp: h.get('timestamp'),
  };
}
