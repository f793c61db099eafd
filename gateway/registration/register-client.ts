import { randomBytes } from 'node:crypto';
import type { Clock, TimerHandle } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import { DigestClient, type ClientCredentials } from '../sip/auth/digest-client.js';
import { Headers } from '../sip/message/headers.js';
import { SipRequest, type SipResponse } from '../sip/message/message.js';
import { newTag } from '../sip/message/response.js';
import { newBranch } from '../sip/transaction/keys.js';
import type { Flow } from '../sip/transport/types.js';
import type { SipStack } from '../sip/ua/sip-stack.js';
import { initialRegisterState, transition, type RegisterAction, type RegisterEvent, type RegisterPolicy, type RegisterState, type RegisterStateName } from './register-state.js';

/** What a trunk registers: its address of record at a registrar (RFC 3261 sec. 10.2). */
export interface RegistrationTarget {
  /** The registrar's domain: the Request-URI (`sip:<domain>`, sec. 10.2) and the AOR's host. */
  readonly domain: string;
  /** The AOR's user part (To and From, sec. 10.2). */
  readonly user: string;
  /** The transport of the REGISTER and of our Contact (`;transport=` off UDP). */
  readonly transport: 'udp' | 'tcp' | 'tls';
  readonly credentials?: ClientCredentials;
}

export interface RegisterClientOptions {
  readonly stack: SipStack;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly target: RegistrationTarget;
  readonly policy: RegisterPolicy;
  /**
   * Where the REGISTER may go, in order (RFC 3263 sec. 4.3), asked afresh before every REGISTER so
   * that a registrar whose address changed in DNS is followed; a transport failure or timeout on
   * one moves to the next. Throws when the name does not resolve.
   */
  readonly targets: () => Promise<readonly Flow[]>;
  /** Every change of state (metrics, the store's view of it). */
  readonly onChange?: (snapshot: RegistrationSnapshot) => void;
  /** The backoff's random draw (tests fix it). */
  readonly random?: () => number;
}

/** What the management API, the dashboard and /metrics show of one registration. */
export interface RegistrationSnapshot {
  readonly state: RegisterStateName;
  /** Clock ms at which the binding ends unless refreshed (registered, refreshing). */
  readonly expiresAt: number | undefined;
  /** Clock ms of the next attempt (backing-off, failed). */
  readonly retryAt: number | undefined;
  /** Why the last attempt failed: a status and reason, or a local cause; never a credential. */
  readonly lastError: string | undefined;
  /** REGISTERs the registrar accepted (bindings added or refreshed) since start. */
  readonly successes: number;
}

/**
 * The runner of a trunk's registration: feeds register-state.ts the final responses to its
 * REGISTERs, its one timer and the stop, and performs what the machine asks (a REGISTER with the
 * digest answer to a challenge, arming or clearing the timer). One Call-ID for the whole boot
 * cycle (sec. 10.2: "SHOULD use the same Call-ID for all registrations during a single boot
 * cycle"); the Contact's user part is the trunk's, stable across restarts, so a re-registration
 * after a restart replaces the old binding instead of adding one (sec. 10.3 step 7).
 */
export class RegisterClient {
  private state: RegisterState;
  private timer: TimerHandle | undefined;
  private readonly callId: string;
  private readonly digest: DigestClient | undefined;
  /** The last challenge of each kind: refreshes answer it pre-emptively (RFC 7616 sec. 3.4, nc up). */
  private readonly challenges = new Map<number, SipResponse>();
  private successes = 0;
  private lastError: string | undefined;
  private stopped: { promise: Promise<void>; resolve: () => void } | undefined;

  constructor(private readonly o: RegisterClientOptions) {
    this.state = initialRegisterState(o.policy);
    this.callId = `${randomBytes(12).toString('hex')}@vap`;
    this.digest = o.target.credentials ? new DigestClient(o.target.credentials) : undefined;
  }

  get name(): RegisterStateName {
    return this.state.name;
  }

  snapshot(): RegistrationSnapshot {
    const s = this.state;
    return {
      state: s.name,
      expiresAt: s.name === 'registered' || s.name === 'refreshing' ? s.binding.expiresAt : undefined,
      retryAt: s.name === 'backing-off' || s.name === 'failed' ? s.failure.retryAt : undefined,
      lastError: this.lastError,
      successes: this.successes,
    };
  }

  start(): void {
    this.feed({ kind: 'start' });
  }

  /**
   * Removes our binding (Expires: 0, sec. 10.2.2) when one may exist and stops; resolves when the
   * registrar answered, or at `timeoutMs` (a drain must not wait for a dead registrar's Timer F).
   */
  async stop(timeoutMs = 5_000): Promise<void> {
    if (this.state.name === 'stopped') return;
    if (!this.stopped) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.stopped = { promise, resolve };
    }
    this.feed({ kind: 'stop' });
    if (this.name === 'stopped') return;
    if (timeoutMs <= 0) return this.forceStop();
    let deadline: TimerHandle | undefined;
    await Promise.race([this.stopped.promise, new Promise<void>((r) => (deadline = this.o.clock.setTimeout(r, timeoutMs)))]);
    if (deadline) this.o.clock.clearTimeout(deadline);
    if (!this.isStopped()) this.forceStop();
  }

  private isStopped(): boolean {
    return this.state.name === 'stopped';
  }

  private forceStop(): void {
    this.clearTimer();
    this.state = { name: 'stopped' };
    this.changed();
  }

  private feed(event: RegisterEvent): void {
    const before = this.state.name;
    const next = transition(this.state, event, this.o.policy);
    this.state = next.state;
    for (const action of next.actions) this.perform(action);
    if (next.state.name === 'registered' && (before === 'registering' || before === 'refreshing')) {
      this.successes++;
      this.lastError = undefined;
    }
    if (next.state.name === 'backing-off' || next.state.name === 'failed') this.lastError = next.state.failure.error;
    if (next.actions.length > 0 || before !== next.state.name) this.changed();
    if (next.state.name === 'stopped') this.stopped?.resolve();
  }

  private changed(): void {
    const snap = this.snapshot();
    if (this.state.name === 'backing-off' || this.state.name === 'failed') {
      this.o.logger.warn({ state: snap.state, error: snap.lastError, retryInMs: (snap.retryAt ?? 0) - this.o.clock.now() }, 'SIP registration failed');
    } else if (this.state.name === 'registered') {
      this.o.logger.debug({ expiresInMs: (snap.expiresAt ?? 0) - this.o.clock.now() }, 'SIP registration granted');
    }
    this.o.onChange?.(snap);
  }

  private perform(action: RegisterAction): void {
    switch (action.kind) {
      case 'set-timer':
        this.clearTimer();
        this.timer = this.o.clock.setTimeout(() => {
          this.timer = undefined;
          this.feed({ kind: 'timer', now: this.o.clock.now() });
        }, action.ms);
        return;
      case 'clear-timer':
        this.clearTimer();
        return;
      case 'send-register':
        if (action.challenge) this.challenges.set(action.challenge.status, action.challenge);
        void this.send(action.cseq, action.expires);
        return;
    }
  }

  private clearTimer(): void {
    if (this.timer) this.o.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** One REGISTER, tried on each target in turn while the stack reports no answer (RFC 3263 sec. 4.3). */
  private async send(cseq: number, expires: number): Promise<void> {
    const random = this.o.random ?? Math.random;
    let flows: readonly Flow[];
    try {
      flows = await this.o.targets();
    } catch (error) {
      this.feed({ kind: 'unreachable', cseq, error: `registrar not resolved: ${(error as Error).message}`.slice(0, 200), now: this.o.clock.now(), random: random() });
      return;
    }
    if (flows.length === 0) {
      this.feed({ kind: 'unreachable', cseq, error: 'registrar not resolved: no DNS records', now: this.o.clock.now(), random: random() });
      return;
    }
    let res: SipResponse | undefined;
    for (const flow of flows) {
      res = await this.o.stack.request(this.build(flow, cseq, expires), flow);
      // RFC 3263 sec. 4.3: no answer (the stack's 408 after Timer F, its 503 for a transport
      // error) or a 503 moves to the next target; any other answer is the registrar's word.
      if (res.status !== 408 && res.status !== 503) break;
    }
    this.feed({ kind: 'response', response: res as SipResponse, now: this.o.clock.now(), random: random() });
  }

  /** A REGISTER per sec. 10.2: Request-URI the domain, To = From = the AOR, our Contact, Expires. */
  private build(flow: Flow, cseq: number, expires: number): SipRequest {
    const t = this.o.target;
    const stack = this.o.stack;
    const param = t.transport === 'udp' ? '' : `;transport=${t.transport}`;
    const requestUri = `sip:${t.domain}${param}`;
    const aor = `sip:${t.user}@${t.domain}`;
    const h = new Headers();
    h.append('Via', stack.viaFor(flow, newBranch()));
    h.append('Max-Forwards', '70');
    h.append('From', `<${aor}>;tag=${newTag()}`);
    h.append('To', `<${aor}>`);
    h.append('Call-ID', this.callId);
    h.append('CSeq', `${cseq} REGISTER`);
    h.append('Contact', `<${stack.contactUri(flow, false, this.o.policy.contactUser)}>`);
    h.append('Expires', String(expires));
    const request = new SipRequest('REGISTER', requestUri, h);
    // Sec. 22.2: answer the registrar's last challenges; the nonce count goes up per use (RFC 7616 sec. 3.4).
    if (this.digest) {
      for (const challenge of this.challenges.values()) {
        const answer = this.digest.answer(request, challenge);
        if (answer) for (const v of answer.values) h.append(answer.name, v);
      }
    }
    return request;
  }
}
