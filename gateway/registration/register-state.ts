import { parseChallenge } from '../sip/auth/digest-client.js';
import type { SipResponse } from '../sip/message/message.js';

/**
 * One trunk's registration with its carrier's registrar (RFC 3261 sec. 10.2) as a state machine.
 * `transition` is pure: register-client.ts feeds it the final responses to our REGISTERs, the
 * timer and the stop of a drain, and performs the actions it returns (send a REGISTER, arm or
 * clear the one timer). Time and the backoff's random draw come in with the events.
 */

export interface RegisterPolicy {
  /** The binding lifetime we ask for (sec. 10.2.1.1, the Expires header). */
  readonly expiresSeconds: number;
  /** The trunk has a username and password, so a digest challenge can be answered (sec. 22.2). */
  readonly credentials: boolean;
  /** The user part of our Contact: how we find our own binding in the 200's Contact list (sec. 10.2.4). */
  readonly contactUser: string;
  /** RFC 5626 sec. 4.5: the wait after a first failure, doubled per consecutive failure ... */
  readonly backoffBaseSeconds: number;
  /** ... up to this, which is also the wait after a refusal that a retry will not fix. */
  readonly backoffMaxSeconds: number;
}

/** What the client carries from state to state. */
export interface RegisterMemory {
  /** CSeq of the last REGISTER: every REGISTER of this Call-ID takes the next one (sec. 10.2: "incremented by one"). */
  readonly cseq: number;
  /** What we ask for now: the policy's, or the Min-Expires of a 423 (sec. 10.2.8). */
  readonly expires: number;
  /** Realms answered in the current attempt: each is answered once unless the nonce went stale (sec. 22.3; RFC 7616 sec. 3.3). */
  readonly realms: readonly string[];
  /** Consecutive failed attempts, for the backoff (RFC 5626 sec. 4.5). */
  readonly failures: number;
}

/** The binding the registrar granted (sec. 10.2.4). */
export interface Binding {
  readonly grantedSeconds: number;
  /** Clock ms at which the registrar drops the binding unless refreshed. */
  readonly expiresAt: number;
}

export interface RegisterFailure {
  readonly status: number | undefined;
  /** Status and reason, or the local cause (DNS, no route): never a credential. */
  readonly error: string;
  /** Clock ms of the retry. */
  readonly retryAt: number;
}

export type RegisterState =
  /** Nothing sent yet, or the client was stopped before anything was bound. */
  | { readonly name: 'unregistered'; readonly memory: RegisterMemory }
  /** A REGISTER is out and no binding is known to exist (sec. 10.2: "adding bindings"). */
  | { readonly name: 'registering'; readonly memory: RegisterMemory }
  /** The registrar's 200 granted a binding; the timer refreshes it before it expires (sec. 10.2.1.1, 10.2.4). */
  | { readonly name: 'registered'; readonly memory: RegisterMemory; readonly binding: Binding }
  /** Registered, and the refreshing REGISTER is out: the binding holds until `expiresAt` (sec. 10.2.1.1). */
  | { readonly name: 'refreshing'; readonly memory: RegisterMemory; readonly binding: Binding }
  /** A transient failure (timeout, 5xx, 6xx, DNS): the next attempt waits, doubling per failure (RFC 5626 sec. 4.5; Retry-After, sec. 20.33). */
  | { readonly name: 'backing-off'; readonly memory: RegisterMemory; readonly failure: RegisterFailure }
  /** The registrar refused us (credentials, 403, 404, other 4xx, sec. 10.3): retried only after the longest wait. */
  | { readonly name: 'failed'; readonly memory: RegisterMemory; readonly failure: RegisterFailure }
  /** Our REGISTER with Expires: 0 for our Contact is out (sec. 10.2.2): a drain or a shutdown. */
  | { readonly name: 'unregistering'; readonly memory: RegisterMemory }
  /** Stopped for good: nothing is sent any more. */
  | { readonly name: 'stopped' };

export type RegisterStateName = RegisterState['name'];

export type RegisterEvent =
  | { readonly kind: 'start' }
  /** The final response to our REGISTER (the stack's own 408/503 for a timeout or transport error included). */
  | { readonly kind: 'response'; readonly response: SipResponse; readonly now: number; readonly random: number }
  /** No REGISTER could go: the registrar's name did not resolve, no target answered at the transport. */
  | { readonly kind: 'unreachable'; readonly cseq: number; readonly error: string; readonly now: number; readonly random: number }
  /** The one timer fired: a refresh or a retry is due. */
  | { readonly kind: 'timer'; readonly now: number }
  /** Drain or shutdown: un-register what may be bound, then stop. */
  | { readonly kind: 'stop' };

export type RegisterAction =
  /** Send a REGISTER with this CSeq and Expires; `challenge`, when set, is to be answered (sec. 22.2). */
  | { readonly kind: 'send-register'; readonly cseq: number; readonly expires: number; readonly challenge?: SipResponse }
  | { readonly kind: 'set-timer'; readonly ms: number }
  | { readonly kind: 'clear-timer' };

export interface RegisterTransition {
  readonly state: RegisterState;
  readonly actions: readonly RegisterAction[];
}

/** At most this many seconds after a 423 (one day): a registrar asking for more is treated as refusing. */
export const MAX_EXPIRES_SECONDS = 86_400;
/** Refreshes are at least this far apart, whatever a registrar grants. */
const MIN_REFRESH_SECONDS = 5;

export function initialRegisterState(policy: RegisterPolicy, cseq = 0): RegisterState {
  return { name: 'unregistered', memory: { cseq, expires: policy.expiresSeconds, realms: [], failures: 0 } };
}

/**
 * When to refresh a binding granted for `granted` seconds. Sec. 10.2.1.1 leaves the schedule to
 * the UA; we refresh at half the lifetime or a minute before it ends, whichever is later, so a
 * refresh lost to a non-INVITE transaction timeout (64*T1 = 32 s) still leaves time for a retry.
 */
export function refreshDelaySeconds(granted: number): number {
  return Math.max(MIN_REFRESH_SECONDS, granted / 2, granted - 60);
}

/**
 * The wait before attempt `failures + 1` (RFC 5626 sec. 4.5): an upper bound of base * 2^(failures-1)
 * capped at max, and a random point between half of it and all of it, so that many clients that
 * failed together (a registrar restart) do not all come back at once.
 */
export function backoffSeconds(policy: RegisterPolicy, failures: number, random: number): number {
  const upper = Math.min(policy.backoffMaxSeconds, policy.backoffBaseSeconds * 2 ** Math.max(0, failures - 1));
  return upper * (0.5 + 0.5 * Math.min(1, Math.max(0, random)));
}

/**
 * The lifetime the registrar granted us (sec. 10.2.4): the `expires` parameter of our own Contact
 * in the 200 (found by its user part), else the Expires header, else what we asked for. undefined:
 * the 200 lists contacts and ours is not among them.
 */
export function grantedSeconds(res: SipResponse, contactUser: string, asked: number): number | undefined {
  const header = parseSeconds(res.headers.get('expires'));
  let listed = false;
  for (const c of res.contacts) {
    if (c.wildcard) continue;
    listed = true;
    let user: string | undefined;
    try {
      const uri = c.uri;
      user = 'user' in uri ? uri.user : undefined;
    } catch {
      continue;
    }
    if (user !== contactUser) continue;
    return parseSeconds(c.params.get('expires') ?? undefined) ?? header ?? asked;
  }
  return listed ? undefined : (header ?? asked);
}

function parseSeconds(text: string | undefined): number | undefined {
  const t = text?.trim() ?? '';
  return /^[0-9]{1,10}$/.test(t) ? Number(t) : undefined;
}

const stay = (state: RegisterState): RegisterTransition => ({ state, actions: [] });

/** The one transition function of a registration; events a state cannot receive leave it unchanged. */
export function transition(state: RegisterState, event: RegisterEvent, policy: RegisterPolicy): RegisterTransition {
  if (state.name === 'stopped') return stay(state);
  switch (event.kind) {
    case 'start':
      if (state.name !== 'unregistered') return stay(state);
      return send({ name: 'registering', memory: state.memory }, state.memory);
    case 'timer':
      return timer(state, event.now);
    case 'stop':
      return stop(state);
    case 'unreachable':
      // Only the REGISTER in flight counts: an older one's outcome says nothing about it.
      if (!('memory' in state) || event.cseq !== state.memory.cseq) return stay(state);
      if (state.name === 'unregistering') return { state: { name: 'stopped' }, actions: [{ kind: 'clear-timer' }] };
      if (state.name !== 'registering' && state.name !== 'refreshing') return stay(state);
      return backOff(state.memory, policy, { status: undefined, error: event.error }, event.now, event.random, undefined);
    case 'response':
      if (state.name !== 'registering' && state.name !== 'refreshing' && state.name !== 'unregistering') return stay(state);
      // Sec. 10.2: one Call-ID, CSeq up by one per REGISTER; a late answer to an earlier one is stale.
      if (event.response.cseq.seq !== state.memory.cseq) return stay(state);
      return response(state, event, policy);
  }
}

/** A new REGISTER on the next CSeq, in `next`'s state. */
function send(next: Extract<RegisterState, { memory: RegisterMemory }>, memory: RegisterMemory, challenge?: SipResponse): RegisterTransition {
  const cseq = memory.cseq + 1;
  const expires = next.name === 'unregistering' ? 0 : memory.expires;
  const state = { ...next, memory: { ...memory, cseq } } as RegisterState;
  return { state, actions: [{ kind: 'send-register', cseq, expires, ...(challenge ? { challenge } : {}) }] };
}

function timer(state: Exclude<RegisterState, { name: 'stopped' }>, now: number): RegisterTransition {
  const fresh = { ...state.memory, realms: [] };
  switch (state.name) {
    case 'registered':
      // Sec. 10.2.1.1: a refresh is a REGISTER like the first, before the binding's expiry.
      return send({ name: 'refreshing', memory: fresh, binding: state.binding }, fresh);
    case 'backing-off':
    case 'failed':
      if (now < state.failure.retryAt) return stay(state);
      return send({ name: 'registering', memory: fresh }, fresh);
    default:
      return stay(state);
  }
}

/** Sec. 10.2.2: a binding that may exist is removed with Expires: 0 for our Contact; otherwise stop at once. */
function stop(state: Exclude<RegisterState, { name: 'stopped' }>): RegisterTransition {
  switch (state.name) {
    case 'registered':
    case 'refreshing':
    case 'registering': {
      // A REGISTER in flight may still be granted: removing our Contact is right either way.
      const t = send({ name: 'unregistering', memory: { ...state.memory, realms: [] } }, { ...state.memory, realms: [] });
      return { state: t.state, actions: [{ kind: 'clear-timer' }, ...t.actions] };
    }
    case 'unregistering':
      return stay(state);
    default:
      return { state: { name: 'stopped' }, actions: [{ kind: 'clear-timer' }] };
  }
}

type InFlight = Extract<RegisterState, { name: 'registering' | 'refreshing' | 'unregistering' }>;

function response(state: InFlight, event: Extract<RegisterEvent, { kind: 'response' }>, policy: RegisterPolicy): RegisterTransition {
  const res = event.response;
  const memory = state.memory;
  if (res.status < 200) return stay(state);
  if (res.status < 300) {
    if (state.name === 'unregistering') return { state: { name: 'stopped' }, actions: [{ kind: 'clear-timer' }] };
    const granted = grantedSeconds(res, policy.contactUser, memory.expires);
    if (granted === undefined || granted === 0) {
      return refuse(memory, policy, { status: res.status, error: `${res.status} ${res.reason}: our Contact is not among the bindings` }, event.now, event.random);
    }
    const binding = { grantedSeconds: granted, expiresAt: event.now + granted * 1000 };
    return { state: { name: 'registered', memory: { ...memory, failures: 0, realms: [] }, binding }, actions: [{ kind: 'set-timer', ms: refreshDelaySeconds(granted) * 1000 }] };
  }
  if ((res.status === 401 || res.status === 407) && policy.credentials) {
    // Sec. 22.3: a realm answered in this attempt and challenged again refused the credentials,
    // unless the challenge says only that the nonce went stale (RFC 7616 sec. 3.3).
    const fresh = challengeToAnswer(res, memory.realms);
    if (fresh) return send({ ...state, memory } as InFlight, { ...memory, realms: [...new Set([...memory.realms, ...fresh])] }, res);
  }
  if (res.status === 423 && state.name !== 'unregistering') {
    // Sec. 10.2.8: ask again for the Min-Expires the registrar names (sec. 20.23), if it is longer.
    const min = parseSeconds(res.headers.get('min-expires'));
    if (min !== undefined && min > memory.expires && min <= MAX_EXPIRES_SECONDS) return send(state, { ...memory, expires: min });
  }
  if (state.name === 'unregistering') return { state: { name: 'stopped' }, actions: [{ kind: 'clear-timer' }] };
  const failure = { status: res.status, error: `${res.status} ${res.reason}`.slice(0, 200) };
  if (transient(res.status)) return backOff(memory, policy, failure, event.now, event.random, parseSeconds(res.headers.get('retry-after')?.split(/[;(]/)[0]));
  return refuse(memory, policy, failure, event.now, event.random);
}

/** The realms of a 401/407 that we may answer now, or undefined when none (sec. 22.3; RFC 7616 sec. 3.3 stale). */
function challengeToAnswer(res: SipResponse, answered: readonly string[]): string[] | undefined {
  const header = res.status === 407 ? 'proxy-authenticate' : 'www-authenticate';
  const realms: string[] = [];
  for (const value of res.headers.getAll(header)) {
    const c = parseChallenge(value);
    if (c && (!answered.includes(c.realm) || c.stale)) realms.push(c.realm);
  }
  return realms.length > 0 ? realms : undefined;
}

/** Worth retrying soon: no answer (408), the registrar's trouble (5xx), a global failure that may pass (6xx), 480, 429. */
function transient(status: number): boolean {
  return status === 408 || status === 480 || status === 429 || status >= 500;
}

function backOff(
  memory: RegisterMemory,
  policy: RegisterPolicy,
  f: Omit<RegisterFailure, 'retryAt'>,
  now: number,
  random: number,
  retryAfter: number | undefined,
): RegisterTransition {
  const failures = memory.failures + 1;
  // Sec. 21.5.4 / 20.33: a 503's Retry-After is the least we wait.
  const seconds = Math.max(backoffSeconds(policy, failures, random), Math.min(retryAfter ?? 0, policy.backoffMaxSeconds));
  const ms = Math.round(seconds * 1000);
  return { state: { name: 'backing-off', memory: { ...memory, failures, realms: [] }, failure: { ...f, retryAt: now + ms } }, actions: [{ kind: 'set-timer', ms }] };
}

function refuse(memory: RegisterMemory, policy: RegisterPolicy, f: Omit<RegisterFailure, 'retryAt'>, now: number, random: number): RegisterTransition {
  const failures = memory.failures + 1;
  const ms = Math.round(policy.backoffMaxSeconds * (0.5 + 0.5 * Math.min(1, Math.max(0, random))) * 1000);
  return { state: { name: 'failed', memory: { ...memory, failures, realms: [] }, failure: { ...f, retryAt: now + ms } }, actions: [{ kind: 'set-timer', ms }] };
}
