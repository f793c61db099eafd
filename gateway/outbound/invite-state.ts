import { parseChallenge } from '../sip/auth/digest-client.js';
import { MAX_422_RETRIES, parseMinSe } from '../sip/dialog/session-timer.js';
import type { SipResponse } from '../sip/message/message.js';

/**
 * The UAC side of one outgoing INVITE attempt as a state machine: the INVITE client transaction
 * of RFC 3261 sec. 17.1.1 seen from its transaction user, with the CANCEL rules of sec. 9.1, the
 * digest retry of sec. 22.2/22.3 and the 422 retry of RFC 4028 sec. 7.4. `transition` is pure:
 * invite-client.ts feeds it the transaction's responses and the ring timer / abort, and performs
 * the actions it returns (send a CANCEL, send the INVITE again, ACK, BYE).
 */

export type CancelCause = 'ring-timeout' | 'aborted';

/** The session interval an INVITE asks for (RFC 4028 sec. 7.1: Session-Expires and Min-SE). */
export interface AskedInterval {
  readonly seconds: number;
  readonly minSe: number;
}

/** What the attempt has learnt so far; every state before `done` carries it. */
export interface AttemptMemory {
  /** CSeq of the INVITE in flight: each new INVITE of the attempt takes the next one (sec. 8.1.3.5). */
  readonly cseq: number;
  /** Realms whose challenge we answered: each is answered once (sec. 22.3). */
  readonly realms: readonly string[];
  /** The session interval asked for; undefined when no session timer is offered. */
  readonly interval: AskedInterval | undefined;
  /** 422s answered so far (RFC 4028 sec. 3: a path of proxies may each ask for more, up to MAX_422_RETRIES). */
  readonly retries422: number;
}

export type InviteState =
  /** The INVITE is out and nothing was heard (sec. 17.1.1.2 "Calling"): no CANCEL may go yet. */
  | { readonly name: 'calling'; readonly memory: AttemptMemory }
  /** A provisional response came (sec. 17.1.1.2 "Proceeding"): a CANCEL may go now. */
  | { readonly name: 'proceeding'; readonly memory: AttemptMemory }
  /** A CANCEL is wanted but nothing was heard: it waits for the first provisional (sec. 9.1). */
  | { readonly name: 'cancel-pending'; readonly memory: AttemptMemory; readonly cause: CancelCause }
  /** The CANCEL went out; the INVITE still ends with its own final response: 487, or a 2xx that won the race (sec. 9.1). */
  | { readonly name: 'cancelling'; readonly memory: AttemptMemory; readonly cause: CancelCause }
  /** A 401/407 we answer: the INVITE goes again with credentials, on the next CSeq (sec. 22.2, 8.1.3.5). */
  | { readonly name: 'challenged'; readonly memory: AttemptMemory; readonly challenge: SipResponse }
  /** A 422 named a higher Min-SE: the INVITE goes again asking for it (RFC 4028 sec. 7.4). */
  | { readonly name: 'interval-too-small'; readonly memory: AttemptMemory }
  | { readonly name: 'done'; readonly end: InviteEnd };

export type InviteEnd =
  /** A 2xx. `cancelled`: our ring-timeout CANCEL lost the race and the call is up anyway. */
  | { readonly kind: 'answered'; readonly cancelled: 'ring-timeout' | undefined }
  /** A 2xx after the CANCEL of an abort: it is ACKed, then ended with BYE (sec. 9.1, 15). */
  | { readonly kind: 'answered-after-cancel' }
  | {
      readonly kind: 'rejected';
      readonly status: number;
      readonly reason: string;
      readonly cancelled: CancelCause | undefined;
      /** A 401/407 we could not, or would not again, answer. */
      readonly challenge: boolean;
      /** No provisional response came before this final one (e.g. the stack's 408 after Timer B). */
      readonly silent: boolean;
    };

export type InviteEvent =
  | { readonly kind: 'provisional'; readonly status: number }
  | { readonly kind: 'final'; readonly response: SipResponse }
  /** The ring timer fired or the caller aborted. */
  | { readonly kind: 'cancel'; readonly cause: CancelCause }
  /** The INVITE a `challenged` or `interval-too-small` state asked for went out. */
  | { readonly kind: 'resent' };

/** What the driver does after a transition, in order. */
export type InviteAction = 'send-cancel' | 'send-invite' | 'ack' | 'bye';

export interface InviteTransition {
  readonly state: InviteState;
  readonly actions: readonly InviteAction[];
}

export interface InvitePolicy {
  /** The route has credentials, so a digest challenge can be answered. */
  readonly credentials: boolean;
}

export function initialState(memory: AttemptMemory): InviteState {
  return { name: 'calling', memory };
}

const stay = (state: InviteState): InviteTransition => ({ state, actions: [] });

/** The realms a 401/407 challenges with a Digest challenge we could answer (sec. 22.2, RFC 7616). */
export function challengedRealms(res: SipResponse): string[] {
  const header = res.status === 407 ? 'proxy-authenticate' : 'www-authenticate';
  const realms = new Set<string>();
  for (const value of res.headers.getAll(header)) {
    const c = parseChallenge(value);
    if (c) realms.add(c.realm);
  }
  return [...realms];
}

/** The one transition function of an INVITE attempt; events a state cannot receive leave it unchanged. */
export function transition(state: InviteState, event: InviteEvent, policy: InvitePolicy): InviteTransition {
  if (state.name === 'done') return stay(state);
  switch (event.kind) {
    case 'provisional':
      if (state.name === 'calling') return { state: { name: 'proceeding', memory: state.memory }, actions: [] };
      // Sec. 9.1: the CANCEL wanted before anything was heard goes with the first provisional.
      if (state.name === 'cancel-pending') return { state: { name: 'cancelling', memory: state.memory, cause: state.cause }, actions: ['send-cancel'] };
      return stay(state);
    case 'cancel':
      return cancel(state, event.cause);
    case 'resent':
      if (state.name === 'challenged' || state.name === 'interval-too-small') return stay({ name: 'calling', memory: state.memory });
      return stay(state);
    case 'final':
      return final(state, event.response, policy);
  }
}

/** The only way to a CANCEL (sec. 9.1): at once once a provisional came, else at the first one. */
function cancel(state: Exclude<InviteState, { name: 'done' }>, cause: CancelCause): InviteTransition {
  switch (state.name) {
    case 'proceeding':
      return { state: { name: 'cancelling', memory: state.memory, cause }, actions: ['send-cancel'] };
    case 'calling':
    case 'challenged':
    case 'interval-too-small':
      // Nothing heard of the INVITE in flight (or the next one is about to go): wait for a provisional.
      return stay({ name: 'cancel-pending', memory: state.memory, cause });
    case 'cancel-pending':
    case 'cancelling':
      return stay(state);
  }
}

function final(state: Exclude<InviteState, { name: 'done' }>, res: SipResponse, policy: InvitePolicy): InviteTransition {
  if (state.name === 'challenged' || state.name === 'interval-too-small') return stay(state);
  const cause = state.name === 'cancel-pending' || state.name === 'cancelling' ? state.cause : undefined;
  const silent = state.name === 'calling' || state.name === 'cancel-pending';
  if (res.status >= 200 && res.status < 300) {
    // Sec. 9.1: a 2xx may overtake our CANCEL; the dialog exists and must be ACKed (sec. 13.2.2.4).
    if (cause === 'aborted') return { state: { name: 'done', end: { kind: 'answered-after-cancel' } }, actions: ['ack', 'bye'] };
    return { state: { name: 'done', end: { kind: 'answered', cancelled: cause } }, actions: ['ack'] };
  }
  const challenge = res.status === 401 || res.status === 407;
  const memory = state.memory;
  if (challenge && !cause && policy.credentials) {
    // Sec. 22.3: credentials refused for a realm we answered are wrong; a new realm is answered once.
    const realms = challengedRealms(res);
    if (realms.length > 0 && realms.every((r) => !memory.realms.includes(r))) {
      return {
        state: { name: 'challenged', memory: { ...memory, cseq: memory.cseq + 1, realms: [...memory.realms, ...realms] }, challenge: res },
        actions: ['send-invite'],
      };
    }
  }
  if (res.status === 422 && !cause && memory.interval && memory.retries422 < MAX_422_RETRIES) {
    const wanted = parseMinSe(res.headers.get('min-se'));
    if (wanted !== undefined && wanted > memory.interval.seconds) {
      return {
        state: { name: 'interval-too-small', memory: { ...memory, cseq: memory.cseq + 1, interval: { seconds: wanted, minSe: wanted }, retries422: memory.retries422 + 1 } },
        actions: ['send-invite'],
      };
    }
  }
  return { state: { name: 'done', end: { kind: 'rejected', status: res.status, reason: res.reason, cancelled: cause, challenge, silent } }, actions: [] };
}
