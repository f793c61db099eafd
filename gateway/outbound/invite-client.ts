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
import { initialState, transition, type CancelCause, type InviteAction, type InviteEvent, type InviteState } from './invite-state.js';

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

export type { CancelCause };

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
      /** Our ring-timeout CANCEL lost the race to the 2xx (sec. 9.1): the call is up anyway. */
      readonly cancelled: 'ring-timeout' | undefined;
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
 * Sends an INVITE and follows it to a final answer, driving the state machine of invite-state.ts
 * (RFC 3261 sec. 17.1.1, 9.1, 22.2/22.3; RFC 4028 sec. 7.4) and performing its actions: answers a
 * 401/407 digest challenge once per realm with the trunk credentials (a fresh CSeq and branch on the
 * same Call-ID and From tag, sec. 8.1.3.5), CANCELs on ring timeout or abort only after a
 * provisional response (sec. 9.1), ACKs the 2xx outside the transaction (sec. 13.2.2.4) and every
 * 2xx retransmission, BYEs a 2xx that overtook the CANCEL of an abort, and ACKs then BYEs a 2xx
 * from a second fork (sec. 13.2.2.4, last paragraph). Reliable provisionals are PRACKed in their
 * early dialog (RFC 3262 sec. 4), which the 2xx of that fork then confirms, so the dialog's CSeq
 * continues past the PRACK. A 422 is retried with its Min-SE while each one raises it, up to
 * MAX_422_RETRIES times (RFC 4028 sec. 3, 7.4).
 */
export async function sendInvite(stack: SipStack, a: InviteAttempt): Promise<InviteOutcome> {
  const p = a.previous;
  const callId = p?.callId ?? `${randomBytes(12).toString('hex')}@${stack.contactUri(a.flow).replace(/^sips?:[^@]*@/, '').replace(/[;:].*$/, '')}`;
  const fromTag = p?.from.tag ?? newTag();
  const digest = a.credentials ? new DigestClient(a.credentials) : undefined;
  /** A failover request carries the previous target's credentials unchanged until it is challenged itself. */
  const carried: Array<readonly [string, string]> = p ? credentialsOf(p) : [];
  /** The challenges answered in this attempt: every INVITE after one answers all of them again (sec. 22.3). */
  const challenges: SipResponse[] = [];
  let interval = a.sessionTimer && a.sessionTimer.intervalSeconds > 0 ? { seconds: a.sessionTimer.intervalSeconds, minSe: a.sessionTimer.minSeSeconds } : undefined;
  // A previous target's 422s raised the interval: the failover request keeps it (the same request).
  const previousSe = p ? parseSessionExpires(p.headers.get('session-expires'))?.seconds : undefined;
  if (interval && previousSe !== undefined && previousSe > interval.seconds) interval = { seconds: previousSe, minSe: parseMinSe(p?.headers.get('min-se')) ?? previousSe };
  const policy = { credentials: digest !== undefined };
  let state = initialState({ cseq: p?.cseq.seq ?? 1, realms: [], interval, retries422: 0 });
  let current: SipRequest | undefined;
  let earlySdp: string | undefined;
  /** Early dialogs by the callee's To tag, with the last RSeq acknowledged (RFC 3262 sec. 4). */
  const early = new Map<string, { dialog: Dialog; rseq: number }>();
  const endEarly = (keep?: Dialog): void => {
    for (const e of early.values()) if (e.dialog !== keep) e.dialog.end('rejected');
    early.clear();
  };
  /** Feeds one event to the machine; the CANCEL it may ask for is the only one this attempt sends. */
  const step = (event: InviteEvent): readonly InviteAction[] => {
    const next = transition(state, event, policy);
    state = next.state;
    if (next.actions.includes('send-cancel') && current) void stack.request(createCancel(current), a.flow);
    return next.actions;
  };

  if (a.signal.aborted) return { kind: 'rejected', status: 0, reason: 'aborted before the INVITE was sent', cancelled: 'aborted', challenge: false };
  const ringTimer = stack.clock.setTimeout(() => step({ kind: 'cancel', cause: 'ring-timeout' }), a.ringTimeoutMs);
  const onAbort = (): void => void step({ kind: 'cancel', cause: 'aborted' });
  a.signal.addEventListener('abort', onAbort);
  try {
    for (;;) {
      if (state.name === 'done') throw new Error('INVITE attempt already ended');
      const m = state.memory;
      const auth = challenges.length > 0 && digest ? answersTo(digest, a, challenges) : carried;
      const invite = buildInvite(stack, a, { callId, fromTag, cseq: m.cseq, auth, timer: m.interval });
      current = invite;
      endEarly();
      step({ kind: 'resent' });
      /** The dialog this INVITE's 2xx made: retransmissions of that 2xx (or another fork's) come after we return. */
      const answered: { dialog?: Dialog } = {};
      const res = await stack.request(
        invite,
        a.flow,
        (r) => {
          const reliable = acknowledgeReliable(stack, invite, r, a.flow, early);
          if (reliable && r.status > 100) {
            earlySdp = sdpOf(r) ?? earlySdp;
            a.onProvisional?.(r);
          }
          step({ kind: 'provisional', status: r.status });
        },
        (retransmit) => {
          const kept = answered.dialog;
          if (kept && retransmit.to.tag === kept.remoteTag) kept.ackFor(retransmit, invite, a.flow);
          else if (kept) dropFork(stack, invite, retransmit, a.flow);
        },
      );
      const actions = step({ kind: 'final', response: res });
      const s = state as InviteState;
      if (s.name === 'challenged') {
        challenges.push(s.challenge);
        continue;
      }
      if (s.name === 'interval-too-small') continue;
      if (s.name !== 'done') throw new Error(`INVITE attempt left in state ${s.name} by a final response`);
      const end = s.end;
      if (end.kind === 'rejected') {
        endEarly();
        return { kind: 'rejected', status: end.status, reason: end.reason, cancelled: end.cancelled, challenge: end.challenge, silent: end.silent, invite };
      }
      const dialog = confirmEarly(early.get(res.to.tag ?? '')?.dialog, res) ?? Dialog.fromResponse(stack, invite, res, a.flow);
      answered.dialog = dialog;
      endEarly(dialog);
      if (actions.includes('ack')) dialog.ackFor(res, invite, a.flow);
      if (actions.includes('bye')) {
        await dialog.bye('cancelled');
        return { kind: 'rejected', status: res.status, reason: 'answered after our CANCEL: ended with BYE', cancelled: 'aborted', challenge: false, silent: false, invite };
      }
      const negotiated = a.sessionTimer ? negotiatedByResponse(res) : undefined;
      return {
        kind: 'answered',
        dialog,
        invite,
        response: res,
        answerSdp: sdpOf(res) ?? earlySdp,
        cancelled: end.kind === 'answered' ? end.cancelled : undefined,
        // We were the UAC of the INVITE: refresher=uac means us (RFC 4028 sec. 7.2).
        sessionTimer: negotiated ? { seconds: negotiated.seconds, weRefresh: negotiated.refresher === 'uac' } : undefined,
      };
    }
  } finally {
    stack.clock.clearTimeout(ringTimer);
    a.signal.removeEventListener('abort', onAbort);
  }
}

/** Credentials for every challenge answered so far, computed for this INVITE (RFC 7616 sec. 3.4: a fresh nc each). */
function answersTo(digest: DigestClient, a: InviteAttempt, challenges: readonly SipResponse[]): Array<readonly [string, string]> {
  const out: Array<readonly [string, string]> = [];
  // The method, Request-URI and body are the same for every INVITE of the attempt.
  const request = new SipRequest('INVITE', a.requestUri, new Headers(), Buffer.from(a.sdp, 'utf8'));
  for (const c of challenges) {
    const answer = digest.answer(request, c);
    if (answer) for (const v of answer.values) out.push([answer.name, v]);
  }
  return out;
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
  // RFC 3261 sec. 8.1.1.8: a SIPS Request-URI needs a SIPS Contact; a sip: one over TLS does not.
  h.append('Contact', `<${stack.contactUri(a.flow, a.requestUri.startsWith('sips:'))}>`);
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
      if (res.status >= 300) stack.logger.info({ sipCallId: invite.callId, status: res.status }, 'PRACK refused');
    },
    (error: unknown) => stack.logger.warn({ err: error, sipCallId: invite.callId }, 'PRACK not sent'),
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
