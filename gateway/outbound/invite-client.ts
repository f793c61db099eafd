import { randomBytes } from 'node:crypto';
import { DigestClient, type ClientCredentials } from '../sip/auth/digest-client.js';
import { Dialog } from '../sip/dialog/dialog.js';
import { MAX_422_RETRIES, negotiatedByResponse, parseMinSe, parseSessionExpires, uacTimerHeaders, type SessionTimerPolicy } from '../sip/dialog/session-timer.js';
import { Headers } from '../sip/message/headers.js';
import { SipRequest, type SipResponse } from '../sip/message/message.js';
import { newTag } from '../sip/message/response.js';
import { createCancel, newBranch } from '../sip/transaction/keys.js';
import type { Flow } from '../sip/transport/types.js';
import { ALLOWED_METHODS, type SipStack } from '../sip/ua/sip-stack.js';

/** One outgoing INVITE as the UAC core sends it (RFC 3261 sec. 8.1.1, 13.2.1). */
export interface InviteAttempt {
  readonly requestUri: string;
  readonly fromUri: string;
  readonly toUri: string;
  readonly flow: Flow;
  readonly sdp: string;
  readonly credentials?: ClientCredentials;
  /** After this long the INVITE is CANCELled (once a provisional response has come, sec. 9.1). */
  readonly ringTimeoutMs: number;
  readonly signal: AbortSignal;
  readonly headers?: ReadonlyArray<readonly [string, string]>;
  /** Every provisional response above 100 (ringing, early media). */
  readonly onProvisional?: (res: SipResponse) => void;
  /**
   * RFC 4028: advertise `timer`, ask for this interval and honour the answer. Only callers that run
   * a SessionTimer on the answered call may set it; without it no timer is offered.
   */
  readonly sessionTimer?: SessionTimerPolicy;
  /**
   * Failover (RFC 3263 sec. 4.3): the INVITE a previous target did not answer. This attempt sends
   * the same request (Call-ID, From tag, CSeq, credentials, session interval) on a new transaction,
   * so a callee that got the first one through a silent target sees a merged request (RFC 3261
   * sec. 8.2.2.2) rather than a second call.
   */
  readonly previous?: SipRequest;
}

export type CancelCause = 'ring-timeout' | 'aborted';

/** "After several INVITE/422 iterations" the request reaches the UAS (RFC 4028 sec. 3); shared with refreshes. */
export { MAX_422_RETRIES };

export type InviteOutcome =
  | {
      readonly kind: 'answered';
      readonly dialog: Dialog;
      readonly invite: SipRequest;
      readonly response: SipResponse;
      /** The SDP answer of the 2xx, or of a reliable-enough 18x when the 2xx repeats none. */
      readonly answerSdp: string | undefined;
      /** A CANCEL was wanted but the 2xx won the race (sec. 9.1): the call is up anyway. */
      readonly cancelled: CancelCause | undefined;
      /** The session timer the 2xx set up (RFC 4028 sec. 7.2); undefined when it carried no Session-Expires. */
      readonly sessionTimer: { readonly seconds: number; readonly weRefresh: boolean } | undefined;
    }
  | {
      readonly kind: 'rejected';
      readonly status: number;
      readonly reason: string;
      readonly cancelled: CancelCause | undefined;
      /** The final response was a digest challenge we could not (or would not again) answer. */
      readonly challenge: boolean;
      /** No provisional response came before the final one (e.g. the stack's 408 after Timer B). */
      readonly silent?: boolean;
      /** The last INVITE sent, for a failover attempt (`InviteAttempt.previous`); absent when none went out. */
      readonly invite?: SipRequest;
    };

export const sdpOf = (m: { body: Buffer; contentType: string | undefined }): string | undefined =>
  m.body.length > 0 && (m.contentType ?? '').toLowerCase().startsWith('application/sdp') ? m.body.toString('utf8') : undefined;

/** RSeq of a reliable provisional response (RFC 3262 sec. 4: Require: 100rel and RSeq), else undefined. */
export function reliableSeq(res: SipResponse): number | undefined {
  if (res.status <= 100 || !res.headers.has('require') || !res.list('require').some((t) => t.toLowerCase() === '100rel')) return undefined;
  const raw = res.headers.get('rseq')?.trim() ?? '';
  return /^[0-9]{1,10}$/.test(raw) && Number(raw) >= 1 && Number(raw) < 2 ** 31 ? Number(raw) : undefined;
}

/**
 * Sends an INVITE and follows it to a final answer: answers one 401/407 digest challenge with
 * the trunk credentials (sec. 22.2, a fresh CSeq and branch on the same Call-ID and From tag,
 * sec. 8.1.3.5), CANCELs on ring timeout or abort only after a provisional response (sec. 9.1),
 * ACKs the 2xx outside the transaction (sec. 13.2.2.4) and every 2xx retransmission, and ACKs
 * then BYEs a 2xx from a second fork (sec. 13.2.2.4, last paragraph). Reliable provisionals are
 * PRACKed in their early dialog (RFC 3262 sec. 4), which the 2xx of that fork then confirms, so the
 * dialog's CSeq continues past the PRACK. A 422 is retried with its Min-SE while each one raises
 * it, up to MAX_422_RETRIES times (RFC 4028 sec. 3, 7.4).
 */
export async function sendInvite(stack: SipStack, a: InviteAttempt): Promise<InviteOutcome> {
  const p = a.previous;
  const callId = p?.callId ?? `${randomBytes(12).toString('hex')}@${stack.contactUri(a.flow).replace(/^sips?:[^@]*@/, '').replace(/[;:].*$/, '')}`;
  const fromTag = p?.from.tag ?? newTag();
  const digest = a.credentials ? new DigestClient(a.credentials) : undefined;
  let cseq = p?.cseq.seq ?? 1;
  let auth: Array<readonly [string, string]> = p ? credentialsOf(p) : [];
  let challenged = false;
  let cancelWanted: CancelCause | undefined;
  let current: SipRequest | undefined;
  let provisional = false;
  let cancelSent = false;
  let earlySdp: string | undefined;
  let timer = a.sessionTimer && a.sessionTimer.intervalSeconds > 0 ? { seconds: a.sessionTimer.intervalSeconds, minSe: a.sessionTimer.minSeSeconds } : undefined;
  // A previous target's 422s raised the interval: the failover request keeps it (the same request).
  const previousSe = p ? parseSessionExpires(p.headers.get('session-expires'))?.seconds : undefined;
  if (timer && previousSe !== undefined && previousSe > timer.seconds) timer = { seconds: previousSe, minSe: parseMinSe(p?.headers.get('min-se')) ?? previousSe };
  let retries422 = 0;
  /** Early dialogs by the callee's To tag, with the last RSeq acknowledged (RFC 3262 sec. 4). */
  const early = new Map<string, { dialog: Dialog; rseq: number }>();
  const endEarly = (keep?: Dialog): void => {
    for (const e of early.values()) if (e.dialog !== keep) e.dialog.end('rejected');
    early.clear();
  };

  const sendCancel = (): void => {
    if (!current || cancelSent || !provisional || !cancelWanted) return;
    cancelSent = true;
    void stack.request(createCancel(current), a.flow);
  };
  const wantCancel = (why: CancelCause): void => {
    if (cancelWanted) return;
    cancelWanted = why;
    sendCancel();
  };
  if (a.signal.aborted) return { kind: 'rejected', status: 0, reason: 'aborted before the INVITE was sent', cancelled: 'aborted', challenge: false };
  const ringTimer = stack.clock.setTimeout(() => wantCancel('ring-timeout'), a.ringTimeoutMs);
  const onAbort = (): void => wantCancel('aborted');
  a.signal.addEventListener('abort', onAbort);
  try {
    for (;;) {
      const invite = buildInvite(stack, a, { callId, fromTag, cseq, auth, timer });
      current = invite;
      endEarly();
      provisional = false;
      cancelSent = false;
      let dialog: Dialog | undefined;
      const res = await stack.request(
        invite,
        a.flow,
        (r) => {
          provisional = true;
          if (!acknowledgeReliable(stack, invite, r, a.flow, early)) return;
          if (r.status > 100) {
            earlySdp = sdpOf(r) ?? earlySdp;
            a.onProvisional?.(r);
          }
          sendCancel();
        },
        (retransmit) => {
          if (dialog && retransmit.to.tag === dialog.remoteTag) dialog.ackFor(retransmit, invite, a.flow);
          else if (dialog) dropFork(stack, invite, retransmit, a.flow);
        },
      );
      const isChallenge = res.status === 401 || res.status === 407;
      if (isChallenge && digest && !challenged && !cancelWanted) {
        const answer = digest.answer(invite, res);
        if (answer) {
          challenged = true;
          auth = answer.values.map((v) => [answer.name, v] as const);
          cseq += 1;
          continue;
        }
      }
      if (res.status === 422 && timer && retries422 < MAX_422_RETRIES && !cancelWanted) {
        const wanted = parseMinSe(res.headers.get('min-se'));
        if (wanted !== undefined && wanted > timer.seconds) {
          retries422 += 1;
          timer = { seconds: wanted, minSe: wanted };
          cseq += 1;
          continue;
        }
      }
      if (res.status >= 200 && res.status < 300) {
        dialog = confirmEarly(early.get(res.to.tag ?? '')?.dialog, res) ?? Dialog.fromResponse(stack, invite, res, a.flow);
        endEarly(dialog);
        dialog.ackFor(res, invite, a.flow);
        const negotiated = a.sessionTimer ? negotiatedByResponse(res) : undefined;
        return {
          kind: 'answered',
          dialog,
          invite,
          response: res,
          answerSdp: sdpOf(res) ?? earlySdp,
          cancelled: cancelWanted,
          // We were the UAC of the INVITE: refresher=uac means us (RFC 4028 sec. 7.2).
          sessionTimer: negotiated ? { seconds: negotiated.seconds, weRefresh: negotiated.refresher === 'uac' } : undefined,
        };
      }
      endEarly();
      return { kind: 'rejected', status: res.status, reason: res.reason, cancelled: cancelWanted, challenge: isChallenge, silent: !provisional, invite };
    }
  } finally {
    stack.clock.clearTimeout(ringTimer);
    a.signal.removeEventListener('abort', onAbort);
  }
}

function buildInvite(
  stack: SipStack,
  a: InviteAttempt,
  s: { callId: string; fromTag: string; cseq: number; auth: ReadonlyArray<readonly [string, string]>; timer: { seconds: number; minSe: number } | undefined },
): SipRequest {
  const h = new Headers();
  h.append('Via', stack.viaFor(a.flow, newBranch()));
  h.append('Max-Forwards', '70');
  h.append('From', `<${a.fromUri}>;tag=${s.fromTag}`);
  h.append('To', `<${a.toUri}>`);
  h.append('Call-ID', s.callId);
  h.append('CSeq', `${s.cseq} INVITE`);
  h.append('Contact', `<${stack.contactUri(a.flow)}>`);
  h.append('Allow', ALLOWED_METHODS.join(', '));
  // RFC 3262 sec. 4 (we PRACK reliable provisionals) and RFC 4028 sec. 7.1 (session timers).
  h.append('Supported', a.sessionTimer ? 'timer, 100rel' : '100rel');
  if (s.timer) for (const [n, v] of uacTimerHeaders(s.timer.seconds, s.timer.minSe)) h.append(n, v);
  for (const [n, v] of s.auth) h.append(n, v);
  for (const [n, v] of a.headers ?? []) h.append(n, v);
  h.append('Content-Type', 'application/sdp');
  return new SipRequest('INVITE', a.requestUri, h, Buffer.from(a.sdp, 'utf8'));
}

/** Authorization and Proxy-Authorization of an INVITE, to send it again unchanged (RFC 3263 sec. 4.3). */
function credentialsOf(invite: SipRequest): Array<readonly [string, string]> {
  const out: Array<readonly [string, string]> = [];
  for (const name of ['Authorization', 'Proxy-Authorization']) for (const v of invite.headers.values(name.toLowerCase())) out.push([name, v]);
  return out;
}

/**
 * RFC 3262 sec. 4: PRACK a reliable provisional in its early dialog, RAck = RSeq, CSeq number and
 * method of the INVITE. The first one of a fork sets the sequence; one whose RSeq is not the next
 * (a retransmission, or out of order) is neither PRACKed nor processed further: returns false.
 */
function acknowledgeReliable(stack: SipStack, invite: SipRequest, r: SipResponse, flow: Flow, early: Map<string, { dialog: Dialog; rseq: number }>): boolean {
  const rseq = reliableSeq(r);
  const tag = r.to.tag;
  if (rseq === undefined || tag === undefined) return true;
  let entry = early.get(tag);
  if (entry && rseq !== entry.rseq + 1) return false;
  if (!entry) {
    entry = { dialog: Dialog.fromResponse(stack, invite, r, flow), rseq };
    early.set(tag, entry);
  }
  entry.rseq = rseq;
  const dialog = entry.dialog;
  void dialog.request('PRACK', { headers: [['RAck', `${rseq} ${invite.cseq.seq} INVITE`]] }).then(
    (res) => {
      if (res.status >= 300) stack.logger.info({ callId: invite.callId, status: res.status }, 'PRACK refused');
    },
    (error: unknown) => stack.logger.warn({ err: error, callId: invite.callId }, 'PRACK not sent'),
  );
  return true;
}

/**
 * The 2xx of a fork whose early dialog we hold confirms that dialog (RFC 3261 sec. 13.2.2.4):
 * route set recomputed from the 2xx's Record-Route (reversed, sec. 12.1.2; a proxy may record-route
 * the 2xx differently from the 1xx), target and Allow from the 2xx.
 */
function confirmEarly(dialog: Dialog | undefined, res: SipResponse): Dialog | undefined {
  if (!dialog) return undefined;
  dialog.routeSet = res.headers.values('record-route').reverse();
  const contact = res.contacts[0];
  if (contact && !contact.wildcard) dialog.remoteTarget = contact.uriText;
  if (res.headers.has('allow')) dialog.remoteAllow = res.list('allow').map((x) => x.toUpperCase());
  return dialog;
}

/** A 2xx from another fork than the one we kept: ACK it and end that dialog at once. */
function dropFork(stack: SipStack, invite: SipRequest, res: SipResponse, flow: Flow): void {
  if (stack.dialogs.findForResponse(res)) return;
  const other = Dialog.fromResponse(stack, invite, res, flow);
  other.ackFor(res, invite, flow);
  void other.bye('local-bye');
}
