import { REASON_PHRASES } from '../message/response.js';

/**
 * A SIP failure with the status to answer (UAS side) or that was received (UAC side), so
 * callers map it precisely instead of a blanket 500 (RFC 3261 sec. 21).
 */
export class SipError extends Error {
  constructor(
    readonly status: number,
    reason?: string,
    /** Extra header fields for the response (Retry-After, Allow, Unsupported...). */
    readonly headers: ReadonlyArray<readonly [string, string]> = [],
  ) {
    super(reason ?? REASON_PHRASES[status] ?? `SIP ${status}`);
    this.name = 'SipError';
  }

  get reason(): string {
    return this.message;
  }
}
