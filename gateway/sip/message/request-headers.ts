import { isTokenChar, isWsp, parseDigits, trimWsp } from './chars.js';
import { SipParseError } from './errors.js';
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

/**
 * An option-tag list (Require, Proxy-Require, Supported: sec. 20.29, 20.32, 20.37): tokens
 * separated by commas and whitespace, checked in place (no split: every request has one).
 */
function checkTokens(line: string): void {
  let inTag = false;
  let gap = false;
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === 44) {
      inTag = false;
      gap = false;
    } else if (isWsp(c)) {
      if (inTag) gap = true;
    } else if (!isTokenChar(c) || gap) {
      throw new SipParseError(`bad option tag in ${line.slice(0, 40)}`);
    } else {
      inTag = true;
    }
  }
}

const NAMES: Readonly<Record<string, string>> = {
  require: 'Require', 'proxy-require': 'Proxy-Require', supported: 'Supported', 'session-expires': 'Session-Expires', 'min-se': 'Min-SE',
};

function checkAddresses(line: string): void {
  for (const v of splitList(line)) void parseNameAddr(v).uri;
}

/**
 * One pass over the header lines (this runs for every request), `header` naming the one being
 * read for the 400 (sec. 21.4.1).
 */
export function validateRequestHeaders(req: SipRequest): void {
  const method = req.method;
  // An ACK is matched and absorbed, never answered (sec. 17.2.1): only what matching reads counts.
  if (method === 'ACK') return;
  let header = 'From';
  try {
    void req.from.uri;
    header = 'To';
    void req.to.uri;
    const inDialog = req.to.tag !== undefined;
    const targets = TARGET_METHODS.has(method);
    const routeSet = DIALOG_CREATING.has(method) && !inDialog;
    const timers = SESSION_TIMER_METHODS.has(method);
    const h = req.headers;
    let contacts = 0;
    const seen = { 'content-type': false, 'session-expires': false, 'min-se': false };
    for (let i = 0; i < h.size; i++) {
      const key = h.keyAt(i);
      const value = h.valueAt(i);
      switch (key) {
        case 'contact':
          if (!targets) break;
          header = 'Contact';
          // All lines at once, in the parse the dialog reads later (SipMessage.contacts).
          if (contacts++ > 0) break;
          for (const c of req.contacts) {
            if (c.wildcard) throw new SipParseError('"*" is a REGISTER Contact only');
            void c.uri;
          }
          break;
        case 'record-route':
          if (!routeSet) break;
          header = 'Record-Route';
          checkAddresses(value);
          break;
        case 'content-type':
          header = 'Content-Type';
          if (seen[key]) throw new SipParseError('more than one Content-Type header');
          seen[key] = true;
          void parseMediaType(value);
          break;
        case 'accept':
          if (method !== 'INVITE') break;
          header = 'Accept';
          void parseAccept([value]);
          break;
        case 'require':
        case 'proxy-require':
        case 'supported':
          header = NAMES[key] ?? key;
          checkTokens(value);
          break;
        case 'session-expires':
        case 'min-se':
          if (!timers) break;
          header = NAMES[key] ?? key;
          if (seen[key]) throw new SipParseError(`more than one ${header} header`);
          seen[key] = true;
          checkDeltaSeconds(value);
          break;
        case 'refer-to':
          if (method !== 'REFER') break;
          header = 'Refer-To';
          checkAddresses(value);
          break;
        default:
      }
    }
    // Sec. 8.1.1.8: a dialog-creating INVITE MUST carry a Contact. RFC 2543 peers (no magic
    // cookie in the branch, RFC 4475 sec. 3.4.1) did not have to: the dialog then reaches them at
    // the From URI over the flow the INVITE came on (see Dialog.fromInvite).
    if (method === 'INVITE' && !inDialog && contacts === 0 && req.topVia.branch?.startsWith(MAGIC_COOKIE)) {
      header = 'Contact';
      throw new SipParseError('INVITE without Contact', { missing: true });
    }
  } catch (e) {
    throw e instanceof SipParseError ? e.inHeader(header) : e;
  }
}
