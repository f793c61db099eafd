import { hasWhitespaceOrControl, isToken, isWsp, parseDigits, trimWsp } from './chars.js';
import { SipParseError, basisOf } from './errors.js';
import { Headers, canonicalName } from './headers.js';
import { EMPTY_BODY, SipRequest, SipResponse, parseCSeq, type SipMessage } from './message.js';
import { parseNameAddr } from './name-addr.js';
import { isSipUri } from './uri.js';
import { validateRequestHeaders } from './request-headers.js';
import { parseViaValues } from './via.js';

/**
 * RFC 3261 sec. 7 message parsing. The head is decoded once, split into raw header lines, and
 * only the fields every transaction needs (Via, From, To, Call-ID, CSeq, Content-Length,
 * Max-Forwards) are parsed eagerly; everything else waits until asked for. All scanning is
 * linear: indexOf and character loops, no backtracking regular expressions on peer input.
 */

export const SIP_VERSION = 'SIP/2.0';

/** Methods of RFC 3261 and its extensions; others get 501 (RFC 3261 sec. 8.2.1). */
export const KNOWN_METHODS = new Set([
  'INVITE', 'ACK', 'BYE', 'CANCEL', 'OPTIONS', 'REGISTER', 'PRACK', 'SUBSCRIBE', 'NOTIFY',
  'PUBLISH', 'INFO', 'REFER', 'MESSAGE', 'UPDATE',
]);

export interface ParsedHead {
  readonly start: StartLine;
  readonly headers: Headers;
  /** First problem met while reading the head; the message is still built to answer it. */
  readonly problem: SipParseError | undefined;
}

type StartLine =
  | { kind: 'request'; method: string; uri: string; version: string }
  | { kind: 'response'; status: number; reason: string; version: string };

function parseStartLine(line: string): { start: StartLine; problem?: SipParseError } {
  if (line.length >= 8 && line.slice(0, 4).toUpperCase() === 'SIP/') {
    // Status-Line = SIP-Version SP Status-Code SP Reason-Phrase (RFC 3261 sec. 7.2)
    const sp1 = line.indexOf(' ');
    const sp2 = sp1 < 0 ? -1 : line.indexOf(' ', sp1 + 1);
    const version = line.slice(0, sp1 < 0 ? line.length : sp1).toUpperCase();
    const codeText = sp1 < 0 ? '' : line.slice(sp1 + 1, sp2 < 0 ? line.length : sp2);
    const status = codeText.length === 3 ? parseDigits(codeText, 3) : undefined;
    if (status === undefined || status < 100 || status > 699) {
      throw new SipParseError(`bad status code: ${codeText.slice(0, 20)}`);
    }
    if (version !== SIP_VERSION) throw new SipParseError(`unsupported version ${version.slice(0, 20)}`);
    return { start: { kind: 'response', status, reason: sp2 < 0 ? '' : line.slice(sp2 + 1), version } };
  }
  // Request-Line: the common shape costs two indexOf calls.
  const a = line.indexOf(' ');
  const b = a < 0 ? -1 : line.indexOf(' ', a + 1);
  if (a > 0 && b > a + 1 && line.length - b === 8 && line.endsWith(SIP_VERSION)) {
    const method = line.slice(0, a);
    if (isToken(method)) return { start: { kind: 'request', method, uri: line.slice(a + 1, b), version: SIP_VERSION } };
  }
  // Request-Line = Method SP Request-URI SP SIP-Version (RFC 3261 sec. 7.1). Extra SP between
  // or after the elements is tolerated (RFC 4475 sec. 3.1.2.9/3.1.2.10 allow either choice) and
  // never written back; whitespace inside the URI is not (sec. 3.1.2.8).
  const parts = line.split(' ').filter((p) => p.length > 0);
  const method = parts[0] ?? '';
  const last = parts[parts.length - 1] ?? '';
  if (!isToken(method) || parts.length < 3 || !/^SIP\/\d+\.\d+$/i.test(last)) {
    throw new SipParseError(`malformed start line: ${line.slice(0, 80)}`);
  }
  const version = last.toUpperCase();
  const uri = parts.slice(1, -1).join(' ');
  const start: StartLine = { kind: 'request', method, uri, version };
  if (parts.length !== 3) return { start, problem: new SipParseError('whitespace inside the Request-URI', { header: 'Request-URI' }) };
  if (version !== SIP_VERSION) {
    return { start, problem: new SipParseError(`SIP version ${version} not supported`, { status: 505 }) };
  }
  return { start };
}

/** Reads the start line and header lines of `text` (the head without its final empty line). */
export function parseHead(text: string): ParsedHead {
  let nl = text.indexOf('\n');
  const firstLine = (nl < 0 ? text : text.slice(0, nl)).replace(/\r$/, '');
  const { start, problem: startProblem } = parseStartLine(firstLine);
  let problem = startProblem;
  const headers = new Headers();
  let name = '';
  let value = '';
  let pos = nl < 0 ? text.length : nl + 1;
  while (pos < text.length) {
    nl = text.indexOf('\n', pos);
    let end = nl < 0 ? text.length : nl;
    const next = end + 1;
    if (end > pos && text.charCodeAt(end - 1) === 13) end--;
    if (isWsp(text.charCodeAt(pos))) {
      // Folding (RFC 3261 sec. 7.3.1): a continuation line is equivalent to a single SP.
      const more = trimWsp(text.slice(pos, end));
      if (!name) problem ??= new SipParseError('continuation line without a header');
      else if (more) value = value ? `${value} ${more}` : more;
    } else {
      if (name) headers.append(name, value);
      name = '';
      // Scan this line only: indexOf could run to a far-away colon for every bad line (quadratic).
      let colon = pos;
      while (colon < end && text.charCodeAt(colon) !== 58) colon++;
      if (colon >= end) {
        problem ??= new SipParseError(`header line without colon: ${text.slice(pos, Math.min(end, pos + 60))}`);
      } else {
        let nameEnd = colon;
        while (nameEnd > pos && isWsp(text.charCodeAt(nameEnd - 1))) nameEnd--;
        const n = text.slice(pos, nameEnd);
        if (!isToken(n)) problem ??= new SipParseError(`bad header name: ${n.slice(0, 60)}`);
        else {
          name = n;
          value = trimWsp(text.slice(colon + 1, end));
        }
      }
    }
    pos = next;
  }
  if (name) headers.append(name, value);
  return { start, headers, problem };
}

function requireSingle(h: Headers, key: string): string {
  const v = h.only(key);
  if (v === undefined) throw new SipParseError(`missing ${canonicalName(key)} header`, { missing: true });
  // RFC 4475 sec. 3.3.8: more than one value in a single-valued field is a 400.
  if (v === null) throw new SipParseError(`more than one ${canonicalName(key)} header`);
  return v;
}

/** Content-Length as declared, `undefined` when absent; RFC 4475 sec. 3.1.2.3 and 3.3.9. */
export function declaredContentLength(h: Headers): number | undefined {
  const lines = h.getAll('content-length');
  if (lines.length === 0) return undefined;
  if (lines.length > 1) throw new SipParseError('more than one Content-Length', { header: 'Content-Length' });
  const n = parseDigits(lines[0] ?? '', 10);
  if (n === undefined) throw new SipParseError(`bad Content-Length: ${(lines[0] ?? '').slice(0, 20)}`, { header: 'Content-Length' });
  return n;
}

/** Builds and validates a message from a parsed head and its body; throws SipParseError. */
export function buildMessage(head: ParsedHead, body: Buffer): SipMessage {
  const { start, headers } = head;
  const msg =
    start.kind === 'request'
      ? new SipRequest(start.method, start.uri, headers, body)
      : new SipResponse(start.status, start.reason, headers, body);
  if (head.problem) throw withBasis(head.problem, msg);
  // The header being read, named in any SipParseError so the 400 can say which (one variable
  // rather than a closure per header: this runs for every message).
  let header = 'Via';
  try {
    const via = parseViaValues(headers.getAll('via'));
    if (via.length === 0) throw new SipParseError('missing Via header', { missing: true });
    header = 'From';
    const from = parseNameAddr(requireSingle(headers, 'from'));
    header = 'To';
    const to = parseNameAddr(requireSingle(headers, 'to'));
    header = 'Call-ID';
    const callId = requireSingle(headers, 'call-id');
    if (callId.length === 0 || hasWhitespaceOrControl(callId)) throw new SipParseError('malformed Call-ID');
    header = 'CSeq';
    const cseq = parseCSeq(requireSingle(headers, 'cseq'));
    header = 'Max-Forwards';
    if (headers.count('max-forwards') > 1) throw new SipParseError('more than one Max-Forwards header');
    void msg.maxForwards;
    if (start.kind === 'request') {
      const req = msg as SipRequest;
      if (cseq.method !== start.method) {
        // RFC 4475 sec. 3.1.2.17/18: 400, or 501 when the method itself is unknown.
        throw new SipParseError('CSeq method does not match the request method', {
          status: KNOWN_METHODS.has(start.method) ? 400 : 501,
          header: 'CSeq',
        });
      }
      header = 'Request-URI';
      const ruri = req.requestUri;
      // Headers are not allowed in a Request-URI (RFC 3261 sec. 19.1.1 table 1; RFC 4475 3.1.2.11).
      if (isSipUri(ruri) && ruri.headers.length > 0) throw new SipParseError('Request-URI carries headers');
      msg.primeViews(via, from, to, cseq);
      // Everything else a UAS reads, checked here so that no malformed value can throw later,
      // deep in routing (RFC 3261 sec. 8.2: a request is validated before it is processed).
      validateRequestHeaders(req);
    } else {
      msg.primeViews(via, from, to, cseq);
    }
  } catch (e) {
    if (e instanceof SipParseError) throw withBasis(e.inHeader(header), msg);
    throw e;
  }
  return msg;
}

/** Attaches what is needed to answer, for requests only (responses are never answered). */
function withBasis(e: SipParseError, msg: SipMessage): SipParseError {
  const basis = msg instanceof SipRequest ? basisOf(msg.method, msg.headers) : undefined;
  return new SipParseError(e.reason, {
    status: e.status,
    ...(basis ? { basis } : {}),
    ...(e.header !== undefined ? { header: e.header, missing: e.missing } : {}),
  });
}

const CRLFCRLF = Buffer.from('\r\n\r\n');

/** Index past any CRLFs preceding the start line (RFC 3261 sec. 7.5). */
export function skipLeadingCrlf(buf: Buffer, from = 0): number {
  let i = from;
  while (i < buf.length && (buf[i] === 13 || buf[i] === 10)) i++;
  return i;
}

/**
 * One message per UDP datagram (RFC 3261 sec. 18.3): without Content-Length the body is the
 * rest of the datagram; octets past Content-Length are dropped (RFC 4475 sec. 3.1.1.8); a
 * Content-Length beyond the datagram is an error that can still be answered (sec. 3.1.2.2).
 */
export function parseDatagram(buf: Buffer): SipMessage {
  const start = skipLeadingCrlf(buf);
  if (start >= buf.length) throw new SipParseError('empty datagram');
  let headEnd = buf.indexOf(CRLFCRLF, start);
  let bodyStart = headEnd + 4;
  let framing: SipParseError | undefined;
  if (headEnd < 0) {
    // Tolerate bare-LF senders; the scan is still a single native search.
    headEnd = buf.indexOf('\n\n', start);
    bodyStart = headEnd + 2;
  }
  if (headEnd < 0) {
    // No empty line (sec. 7 requires it). The datagram is the frame (sec. 18.3), so the head is
    // all of it and the request can still be answered from its Via, From, To, Call-ID and CSeq.
    // Ending on a complete header line (RFC 4475's archive file of baddn ends "l: 0" CRLF) only
    // the empty line is missing and the head is judged as it is; a datagram cut inside a line
    // is answered 400 for that.
    headEnd = buf.length;
    bodyStart = buf.length;
    if (buf[buf.length - 1] !== 10) framing = new SipParseError('no empty line after the headers');
  }
  const parsed = parseHead(buf.toString('utf8', start, headEnd));
  const head = framing ? { ...parsed, problem: parsed.problem ?? framing } : parsed;
  let length: number | undefined;
  try {
    length = declaredContentLength(head.headers);
  } catch (e) {
    if (!(e instanceof SipParseError)) throw e;
    return buildMessage({ ...head, problem: head.problem ?? e }, EMPTY_BODY);
  }
  const available = buf.length - bodyStart;
  if (length !== undefined && length > available) {
    const problem = new SipParseError(`Content-Length ${length} exceeds the ${available} octets received`, { header: 'Content-Length' });
    return buildMessage({ ...head, problem: head.problem ?? problem }, EMPTY_BODY);
  }
  const size = length ?? available;
  return buildMessage(head, size === 0 ? EMPTY_BODY : buf.subarray(bodyStart, bodyStart + size));
}

