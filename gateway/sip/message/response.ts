import { randomBytes } from 'node:crypto';
import { basisOf, type ResponseBasis, type SipParseError } from './errors.js';
import { Headers } from './headers.js';
import { EMPTY_BODY, SipResponse, type SipRequest } from './message.js';

/** Reason phrases of RFC 3261 sec. 21 (and a few extensions) for the codes we send. */
export const REASON_PHRASES: Readonly<Record<number, string>> = {
  100: 'Trying', 180: 'Ringing', 181: 'Call Is Being Forwarded', 182: 'Queued', 183: 'Session Progress',
  200: 'OK', 202: 'Accepted', 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden',
  404: 'Not Found', 405: 'Method Not Allowed', 406: 'Not Acceptable', 407: 'Proxy Authentication Required',
  408: 'Request Timeout', 410: 'Gone', 413: 'Request Entity Too Large', 415: 'Unsupported Media Type',
  416: 'Unsupported URI Scheme', 420: 'Bad Extension', 421: 'Extension Required', 423: 'Interval Too Brief',
  480: 'Temporarily Unavailable', 481: 'Call/Transaction Does Not Exist', 482: 'Loop Detected',
  483: 'Too Many Hops', 484: 'Address Incomplete', 486: 'Busy Here', 487: 'Request Terminated',
  488: 'Not Acceptable Here', 491: 'Request Pending', 500: 'Server Internal Error', 501: 'Not Implemented',
  502: 'Bad Gateway', 503: 'Service Unavailable', 504: 'Server Time-out', 505: 'Version Not Supported',
  513: 'Message Too Large', 600: 'Busy Everywhere', 603: 'Decline', 604: 'Does Not Exist Anywhere',
  606: 'Not Acceptable',
};

const TAG_BYTES = 6;
/** Random octets drawn in blocks: one crypto call per 256 tags instead of one per tag. */
let tagPool = Buffer.alloc(0);
let tagAt = 0;

/** A To tag with at least 32 bits of randomness (RFC 3261 sec. 19.3): 48 bits, hex. */
export function newTag(): string {
  if (tagAt + TAG_BYTES > tagPool.length) {
    tagPool = randomBytes(TAG_BYTES * 256);
    tagAt = 0;
  }
  tagAt += TAG_BYTES;
  return tagPool.toString('hex', tagAt - TAG_BYTES, tagAt);
}

export interface ResponseOptions {
  /** To tag to add when the request's To has none; a fresh one is made otherwise. */
  readonly toTag?: string;
  readonly headers?: Iterable<readonly [string, string]>;
  readonly body?: Buffer;
}

/** Best effort for unparsable To values; parsed requests use their parsed tag instead. */
const rawHasTag = (to: string): boolean => /;\s*tag\s*=/i.test(to);

function build(
  basis: ResponseBasis,
  status: number,
  reason: string | undefined,
  opts: ResponseOptions,
  toHasTag: boolean,
): SipResponse {
  // RFC 3261 sec. 8.2.6.2: Via (all, in order), From, To, Call-ID and CSeq are copied; the UAS
  // adds a To tag unless it is answering with 100 or the request already had one.
  const h = new Headers();
  for (const v of basis.vias) h.append('Via', v);
  if (basis.from !== undefined) h.append('From', basis.from);
  if (basis.to !== undefined) {
    h.append('To', status > 100 && !toHasTag ? `${basis.to};tag=${opts.toTag ?? newTag()}` : basis.to);
  }
  if (basis.callId !== undefined) h.append('Call-ID', basis.callId);
  if (basis.cseq !== undefined) h.append('CSeq', basis.cseq);
  // RFC 3261 sec. 8.2.6.1: a 100 echoes the request's Timestamp.
  if (status === 100 && basis.timestamp !== undefined) h.append('Timestamp', basis.timestamp);
  for (const [n, v] of opts.headers ?? []) h.append(n, v);
  return new SipResponse(status, reason ?? REASON_PHRASES[status] ?? 'Unknown', h, opts.body ?? EMPTY_BODY);
}

/** A response to a well-formed request (RFC 3261 sec. 8.2.6). */
export function createResponse(req: SipRequest, status: number, reason?: string, opts: ResponseOptions = {}): SipResponse {
  return build(basisOf(req.method, req.headers), status, reason, opts, req.to.tag !== undefined);
}

/**
 * The reason phrase for a parse failure (RFC 3261 sec. 21.4.1 leaves the text to us): it names
 * the header at fault ("Bad To Header", "Missing Contact Header", "Bad Request-URI"), else says
 * what was wrong with the message.
 */
export function parseErrorReason(err: SipParseError): string {
  if (err.status !== 400) return REASON_PHRASES[err.status] ?? 'Bad Request';
  if (err.header === 'Request-URI') return 'Bad Request-URI';
  if (err.header !== undefined) return `${err.missing ? 'Missing' : 'Bad'} ${err.header} Header`;
  return `Bad Request (${safeText(err.reason)})`;
}

/** The reason text comes partly from peer input: keep only harmless characters. */
const safeText = (text: string): string => text.replace(/[^A-Za-z0-9 .,;:()/-]/g, '').slice(0, 80);

/**
 * The answer to a request that failed to parse, or `undefined` when there is nobody to answer
 * (responses, or requests without any Via). ACK is never answered (RFC 3261 sec. 17.2.1). When
 * the reason phrase names a header, a Warning (sec. 20.43, code 399) carries the detail, from
 * `warnAgent` (a token: our Server name).
 */
export function createErrorResponse(err: SipParseError, opts: ResponseOptions & { readonly warnAgent?: string } = {}): SipResponse | undefined {
  if (!err.canRespond || !err.basis || err.basis.method === 'ACK') return undefined;
  const headers = [...(opts.headers ?? [])];
  if (err.header !== undefined && opts.warnAgent !== undefined) headers.push(['Warning', `399 ${opts.warnAgent} "${safeText(err.reason)}"`]);
  return build(err.basis, err.status, parseErrorReason(err), { ...opts, headers }, err.basis.to !== undefined && rawHasTag(err.basis.to));
}
