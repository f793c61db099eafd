import { isToken, parseDigits, trimWsp } from './chars.js';
import { SipParseError, inHeader } from './errors.js';
import { splitList } from './headers.js';
import { parseAccept, parseMediaType } from './media-type.js';
import type { SipRequest } from './message.js';
import { parseNameAddr } from './name-addr.js';
import { Params, parseParamsAt } from './params.js';
import { MAGIC_COOKIE } from './via.js';

/**
 * The header fields a UAS reads after the parser has let a request through, validated up front
 * (RFC 3261 sec. 8.2: "reasonable syntax" before any processing; sec. 16.3 step 1 for the same
 * idea at a proxy). Without this, a malformed value is only found when routing first touches it
 * (the To URI in the number lookup, the Contact when the dialog is built) and surfaces there as an
 * internal error. Each failure names its header, so the answer is a precise 400 ("Bad To
 * Header", sec. 21.4.1) sent before any lookup.
 *
 * What is checked is what this stack reads, so that headers nobody uses (Date, Subject, a
 * REGISTER's Contact, which only a registrar reads: RFC 4475 sec. 3.1.2.13) stay lenient.
 */

/** Methods whose Contact is a remote target (RFC 3261 sec. 8.1.1.8, 12.1; 3311; 3515; 6665). */
const TARGET_METHODS = new Set(['INVITE', 'UPDATE', 'SUBSCRIBE', 'NOTIFY', 'REFER']);
/** Methods that may create a dialog, whose Record-Route becomes the route set (sec. 12.1.1). */
const DIALOG_CREATING = new Set(['INVITE', 'SUBSCRIBE', 'REFER']);
/** Methods that negotiate RFC 4028 session timers. */
const SESSION_TIMER_METHODS = new Set(['INVITE', 'UPDATE']);

/** `delta-seconds *(SEMI generic-param)` (RFC 4028 sec. 4 Session-Expires, sec. 5 Min-SE). */
function checkDeltaSeconds(value: string): void {
  const s = trimWsp(value);
  const semi = s.indexOf(';');
  const delta = trimWsp(semi < 0 ? s : s.slice(0, semi));
  if (parseDigits(delta, 10) === undefined) throw new SipParseError(`bad delta-seconds: ${delta.slice(0, 20)}`);
  if (semi >= 0 && parseParamsAt(s, semi, new Params()) !== s.length) throw new SipParseError(`malformed parameters: ${s.slice(semi, semi + 40)}`);
}

/** An option-tag list (Require, Proxy-Require, Supported: sec. 20.29, 20.32, 20.37). */
function checkTokens(line: string): void {
  for (const tag of splitList(line)) {
    if (tag.length > 0 && !isToken(tag)) throw new SipParseError(`bad option tag: ${tag.slice(0, 40)}`);
  }
}

function checkAddress(value: string): void {
  void parseNameAddr(value).uri;
}

function each(req: SipRequest, key: string, header: string, check: (value: string) => void): void {
  for (const line of req.headers.getAll(key)) inHeader(header, () => check(line));
}

export function validateRequestHeaders(req: SipRequest): void {
  const method = req.method;
  // An ACK is matched and absorbed, never answered (sec. 17.2.1): only what matching reads counts.
  if (method === 'ACK') return;
  inHeader('From', () => req.from.uri);
  inHeader('To', () => req.to.uri);
  const inDialog = req.to.tag !== undefined;
  if (TARGET_METHODS.has(method)) {
    for (const line of req.headers.getAll('contact')) {
      for (const v of splitList(line)) inHeader('Contact', () => checkAddress(v));
    }
    // Sec. 8.1.1.8: a dialog-creating INVITE MUST carry a Contact. RFC 2543 peers (no magic
    // cookie in the branch, RFC 4475 sec. 3.4.1) did not have to: the dialog then reaches them at
    // the From URI over the flow the INVITE came on (see Dialog.fromInvite).
    if (method === 'INVITE' && !inDialog && !req.headers.has('contact') && req.topVia.branch?.startsWith(MAGIC_COOKIE)) {
      throw new SipParseError('INVITE without Contact', { header: 'Contact', missing: true });
    }
  }
  if (DIALOG_CREATING.has(method) && !inDialog) {
    for (const line of req.headers.getAll('record-route')) {
      for (const v of splitList(line)) inHeader('Record-Route', () => checkAddress(v));
    }
  }
  const contentType = req.headers.getAll('content-type');
  if (contentType.length > 1) throw new SipParseError('more than one Content-Type header', { header: 'Content-Type' });
  each(req, 'content-type', 'Content-Type', (v) => void parseMediaType(v));
  if (method === 'INVITE') inHeader('Accept', () => parseAccept(req.headers.getAll('accept')));
  each(req, 'require', 'Require', checkTokens);
  each(req, 'proxy-require', 'Proxy-Require', checkTokens);
  each(req, 'supported', 'Supported', checkTokens);
  if (SESSION_TIMER_METHODS.has(method)) {
    for (const [key, header] of [['session-expires', 'Session-Expires'], ['min-se', 'Min-SE']] as const) {
      const lines = req.headers.getAll(key);
      if (lines.length > 1) throw new SipParseError(`more than one ${header} header`, { header });
      each(req, key, header, checkDeltaSeconds);
    }
  }
  if (method === 'REFER') each(req, 'refer-to', 'Refer-To', checkAddress);
}
