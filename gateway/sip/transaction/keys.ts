import { randomBytes } from 'node:crypto';
import { Headers, splitList } from '../message/headers.js';
import { SipRequest, type SipMessage, type SipResponse } from '../message/message.js';
import { MAGIC_COOKIE, type Via } from '../message/via.js';

/** A fresh RFC 3261 branch: the magic cookie plus enough randomness to be unique (sec. 8.1.1.7). */
export function newBranch(): string {
  return `${MAGIC_COOKIE}${randomBytes(10).toString('base64url')}`;
}

/**
 * A key that owns its characters. Concatenations of slices of a message keep the whole decoded
 * message alive (V8 cons and sliced strings point into it), and a table holds its keys for
 * 64*T1; reading a character makes V8 flatten the string in place, which lets the message go.
 */
function ownKey(key: string): string {
  key.charCodeAt(0);
  return key;
}

/** RFC 3261 sec. 17.1.3: a response matches the client transaction of its top branch and CSeq method. */
export function clientTransactionKey(msg: SipMessage): string | undefined {
  const branch = msg.via[0]?.branch;
  return branch ? ownKey(`${branch}|${msg.cseq.method}`) : undefined;
}

/**
 * RFC 3261 sec. 17.2.3: a request matches a server transaction by branch, sent-by and method,
 * an ACK matching its INVITE. Requests without the magic cookie come from RFC 2543 peers (RFC
 * 4475 sec. 3.4.1), which the same section matches on Request-URI, From tag, Call-ID, CSeq
 * number and top Via instead; without that a retransmitted INVITE over UDP would start a second
 * call. The To tag is left out: for the INVITE and its CANCEL it is absent, and an ACK that
 * matches on everything else is the ACK of that INVITE's final response (sec. 17.2.3 compares
 * it with the tag we sent). A CANCEL keys like its INVITE but for the method, as the table
 * expects (sec. 9.2).
 */
export function serverTransactionKey(req: SipRequest): string | undefined {
  const top = req.via[0];
  if (!top) return undefined;
  const method = req.method === 'ACK' ? 'INVITE' : req.method;
  const key = rfc3261ServerKey(top, method);
  if (key !== undefined) return ownKey(key);
  const sentBy = `${top.host.toLowerCase()}:${top.port ?? ''}`;
  return ownKey(`2543|${req.uri}|${req.from.tag ?? ''}|${req.callId}|${req.cseq.seq}|${top.branch ?? ''}|${sentBy}|${method}`);
}

/**
 * The ACK a client INVITE transaction sends for a 300-699 (RFC 3261 sec. 17.1.1.3): same
 * Request-URI, Call-ID, From and top Via as the INVITE, To from the response, the INVITE's
 * Route set, and CSeq number with method ACK.
 */
export function createNonSuccessAck(invite: SipRequest, res: SipResponse): SipRequest {
  return sameTransactionRequest('ACK', invite, res.headers.get('to') ?? '');
}

/**
 * A CANCEL for a pending INVITE (RFC 3261 sec. 9.1): same Request-URI, Call-ID, From, To,
 * CSeq number and top Via (so the same branch) as the INVITE, and its Route set.
 */
export function createCancel(invite: SipRequest): SipRequest {
  return sameTransactionRequest('CANCEL', invite, invite.headers.get('to') ?? '');
}

/** A request that shares the INVITE's top Via (its branch), Request-URI, route set, From, Call-ID and CSeq number. */
function sameTransactionRequest(method: 'ACK' | 'CANCEL', invite: SipRequest, to: string): SipRequest {
  const h = new Headers();
  const topVia = invite.headers.getAll('via')[0];
  if (topVia !== undefined) h.append('Via', splitList(topVia)[0] ?? topVia);
  h.append('Max-Forwards', '70');
  for (const route of invite.headers.getAll('route')) h.append('Route', route);
  h.append('From', invite.headers.get('from') ?? '');
  h.append('To', to);
  h.append('Call-ID', invite.callId);
  h.append('CSeq', `${invite.cseq.seq} ${method}`);
  return new SipRequest(method, invite.uri, h);
}

/**
 * The server transaction key of a request with an RFC 3261 branch (magic cookie), from its top
 * Via alone: what admission control can compute from a peeked head to recognise a retransmission.
 */
export function rfc3261ServerKey(top: Via, method: string): string | undefined {
  if (!top.branch || !top.branch.startsWith(MAGIC_COOKIE) || top.branch.length <= MAGIC_COOKIE.length) return undefined;
  return `${top.branch}|${top.host.toLowerCase()}:${top.port ?? ''}|${method}`;
}
