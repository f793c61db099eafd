import { randomInt } from 'node:crypto';
import type { Clock, TimerHandle } from '../../../core/clock.js';
import type { Logger } from '../../../core/logger.js';
import type { SipMessage, SipResponse } from '../message/message.js';
import { SipError } from '../ua/sip-error.js';
import type { RefreshObserver } from './dialog.js';

/**
 * RFC 4028 session timers: header parsing, the UAS and UAC negotiation rules (sec. 7, 9) and the
 * per-dialog timer that refreshes at half the interval or sends BYE when no refresh came (sec. 10).
 */

export type Refresher = 'uac' | 'uas';

/** Local policy: the interval we ask for or volunteer, and the smallest one we accept (our Min-SE). */
export interface SessionTimerPolicy {
  /** Session-Expires we put in INVITEs and in answers to requests without one; 0: never volunteer a timer. */
  readonly intervalSeconds: number;
  /** Below this a request is refused 422 (sec. 6). The RFC floor is 90 s (sec. 4); only tests go lower. */
  readonly minSeSeconds: number;
}

/** RFC 4028 sec. 4 recommends 1800 s; 90 s is the smallest Min-SE allowed (sec. 5). */
export const DEFAULT_SESSION_TIMER: SessionTimerPolicy = { intervalSeconds: 1800, minSeSeconds: 90 };

export interface SessionExpires {
  readonly seconds: number;
  readonly refresher: Refresher | undefined;
}

/** `Session-Expires: delta-seconds *(;se-params)` (sec. 4); compact form `x` is expanded by the parser. */
export function parseSessionExpires(value: string | undefined): SessionExpires | undefined {
  if (value === undefined) return undefined;
  const [delta, ...params] = value.split(';').map((s) => s.trim());
  if (!delta || !/^[0-9]{1,10}$/.test(delta)) return undefined;
  let refresher: Refresher | undefined;
  for (const p of params) {
    const m = /^refresher\s*=\s*(uac|uas)$/i.exec(p);
    if (m) refresher = (m[1] as string).toLowerCase() as Refresher;
  }
  return { seconds: Number(delta), refresher };
}

/** `Min-SE: delta-seconds *(;generic-param)` (sec. 5). */
export function parseMinSe(value: string | undefined): number | undefined {
  const delta = value?.split(';')[0]?.trim();
  return delta && /^[0-9]{1,10}$/.test(delta) ? Number(delta) : undefined;
}

const hasTag = (m: SipMessage, header: 'supported' | 'require', tag: string): boolean =>
  m.headers.has(header) && m.list(header).some((t) => t.toLowerCase() === tag);

/** The peer understands session timers: `timer` in Supported or Require (sec. 7.1, 9). */
export const supportsTimer = (m: SipMessage): boolean => hasTag(m, 'supported', 'timer') || hasTag(m, 'require', 'timer');

export type UasNegotiation =
  | { readonly kind: 'too-small'; readonly minSe: number }
  | { readonly kind: 'none' }
  | { readonly kind: 'active'; readonly seconds: number; readonly refresher: Refresher; readonly headers: ReadonlyArray<readonly [string, string]> };

/**
 * UAS behaviour for an INVITE or UPDATE (sec. 9): too small an interval from a UAC that supports
 * timers is refused 422 with our Min-SE; a proxy-inserted one (the UAC lacks `timer`) is raised to
 * it instead, since that UAC could not act on a 422. The interval is copied, the refresher copied
 * or chosen: the UAC when it supports timers (it asked, it refreshes), else us. `Require: timer`
 * goes in the 2xx whenever the UAC supports timers and the answer carries Session-Expires.
 */
export function negotiateAsUas(req: SipMessage, policy: SessionTimerPolicy): UasNegotiation {
  const asked = parseSessionExpires(req.headers.get('session-expires'));
  const supported = supportsTimer(req);
  const floor = Math.max(policy.minSeSeconds, parseMinSe(req.headers.get('min-se')) ?? 0);
  let seconds: number;
  if (asked) {
    if (asked.seconds < policy.minSeSeconds && supported) return { kind: 'too-small', minSe: policy.minSeSeconds };
    seconds = Math.max(asked.seconds, floor);
  } else {
    if (policy.intervalSeconds <= 0) return { kind: 'none' };
    seconds = Math.max(policy.intervalSeconds, floor);
  }
  const refresher: Refresher = !supported ? 'uas' : (asked?.refresher ?? 'uac');
  const headers: Array<readonly [string, string]> = [['Session-Expires', `${seconds};refresher=${refresher}`]];
  if (supported) headers.push(['Require', 'timer']);
  return { kind: 'active', seconds, refresher, headers };
}

/**
 * UAC behaviour on a 2xx (sec. 7.2): without Session-Expires there is no session timer; with one,
 * the refresher parameter says who refreshes (a UAS must set it; when it is missing we refresh).
 */
export function negotiatedByResponse(res: SipResponse): SessionExpires | undefined {
  const se = parseSessionExpires(res.headers.get('session-expires'));
  return se ? { seconds: se.seconds, refresher: se.refresher ?? 'uac' } : undefined;
}

/** Headers of a request we send as UAC of a session timer (sec. 7.1, 7.4): no Supported, callers merge it. */
export function uacTimerHeaders(seconds: number, minSe: number, refresher?: Refresher): Array<readonly [string, string]> {
  return [
    ['Session-Expires', refresher ? `${seconds};refresher=${refresher}` : String(seconds)],
    ['Min-SE', String(minSe)],
  ];
}

/** When the side that does not refresh gives up: the interval less min(32 s, a third of it) (sec. 10). */
export const expiryMs = (seconds: number): number => (seconds - Math.min(32, seconds / 3)) * 1000;

/**
 * Each proxy on the path may answer 422 with a higher Min-SE (RFC 4028 sec. 3); each retry must
 * raise the interval, and this bound stops a peer that raises it by one second forever.
 */
export const MAX_422_RETRIES = 3;

/** The longest delay a Node timer holds (about 24.8 days); a longer one fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** What the timer needs of a dialog (Dialog satisfies it). */
export interface SessionTimerLeg {
  readonly callId: string;
  readonly remoteAllow: readonly string[] | undefined;
  refreshObserver: RefreshObserver | undefined;
  request(method: string, options?: { headers?: ReadonlyArray<readonly [string, string]>; keepOnFailure?: boolean }): Promise<SipResponse>;
  reinvite(sdp: string, options?: { headers?: ReadonlyArray<readonly [string, string]>; onResponse?: (res: SipResponse) => void }): Promise<string | undefined>;
  once(event: 'destroy', listener: (e: { reason: string }) => void): unknown;
}

export interface SessionTimerHooks {
  /** The SDP a refresh re-INVITE offers again (our current one; sec. 10 keeps the session unchanged). */
  offer(): string | undefined;
  /** The answer to that re-INVITE. */
  answer?(sdp: string): void;
  /** The session expired without a refresh, or a refresh got 408/481: end the call with BYE (sec. 10). */
  expired(why: string): void;
}

/**
 * One dialog's session timer (sec. 10). The refresher sends a refresh at half the interval:
 * UPDATE when the peer listed it in Allow (no offer needed, RFC 3311), else a re-INVITE offering
 * the current SDP again. Either side that has seen no successful refresh by the interval less
 * min(32 s, interval/3) ends the call. Every successful re-INVITE/UPDATE in either direction is
 * a refresh and renegotiates interval and refresher through the dialog's `refreshObserver`.
 */
export class SessionTimer {
  private refreshTimer: TimerHandle | undefined;
  private expiryTimer: TimerHandle | undefined;
  private stopped = false;
  private seconds = 0;
  private minSe: number;
  /** The peer refused our refresh UPDATE with 405/501 (RFC 3311 not supported after all): re-INVITE from now on. */
  private updateRefused = false;
  /** Whether we are the refresher now. */
  weRefresh = false;

  constructor(
    private readonly leg: SessionTimerLeg,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly policy: SessionTimerPolicy,
    private readonly hooks: SessionTimerHooks,
  ) {
    this.minSe = policy.minSeSeconds;
    leg.refreshObserver = {
      check: (req) => {
        const n = negotiateAsUas(req, { ...policy, minSeSeconds: this.minSe });
        if (n.kind === 'too-small') throw new SipError(422, 'Session Interval Too Small', [['Min-SE', String(n.minSe)]]);
        if (n.kind === 'none') return { headers: [], commit: () => this.clear() };
        // We are the UAS of this refresh: 'uas' means we refresh from now on.
        return { headers: n.headers, commit: () => this.arm(n.seconds, n.refresher === 'uas') };
      },
    };
    leg.once('destroy', () => this.stop());
  }

  get intervalSeconds(): number {
    return this.seconds;
  }

  get active(): boolean {
    return this.expiryTimer !== undefined;
  }

  /** (Re)starts the timer after a successful INVITE/UPDATE exchange. */
  arm(seconds: number, weRefresh: boolean): void {
    if (this.stopped) return;
    this.clear();
    // A 2xx may name any delta-seconds. Under 90 s (no Min-SE may be lower, sec. 5) it is broken,
    // and 0 would refresh in a tight loop: such a value is raised to our Min-SE (to 90 s at most).
    // Values from 90 s up stand even below our Min-SE: the peer expires the session by its value.
    const floor = Math.min(this.minSe, 90);
    if (seconds < floor) this.logger.info({ seconds, minSe: floor }, 'session interval below the RFC 4028 floor: raised');
    const interval = Math.max(seconds, floor, 1);
    this.seconds = interval;
    this.weRefresh = weRefresh;
    if (weRefresh) this.refreshTimer = this.clock.setTimeout(() => void this.refresh(), Math.min((interval * 1000) / 2, MAX_TIMER_MS));
    this.expiryTimer = this.clock.setTimeout(() => {
      this.expiryTimer = undefined;
      this.logger.info({ seconds: interval }, 'session expired without a refresh: ending the call (RFC 4028 sec. 10)');
      this.hooks.expired('session-expired');
    }, Math.min(expiryMs(interval), MAX_TIMER_MS));
  }

  stop(): void {
    this.stopped = true;
    this.clear();
    this.leg.refreshObserver = undefined;
  }

  private clear(): void {
    if (this.refreshTimer) this.clock.clearTimeout(this.refreshTimer);
    if (this.expiryTimer) this.clock.clearTimeout(this.expiryTimer);
    this.refreshTimer = this.expiryTimer = undefined;
  }

  /**
   * Our refresh (sec. 10): we stay refresher (`refresher=uac`, we send it). A 422 is retried with
   * its Min-SE while each one raises it, up to MAX_422_RETRIES times (sec. 7.4, as for the INVITE);
   * an UPDATE refused 405/501 is sent again as a re-INVITE, and so are later refreshes.
   */
  private async refresh(retries422 = 0): Promise<void> {
    this.refreshTimer = undefined;
    if (this.stopped) return;
    const headers: Array<readonly [string, string]> = [['Supported', 'timer'], ...uacTimerHeaders(this.seconds, this.minSe, 'uac')];
    const sdp = this.hooks.offer();
    const useUpdate = sdp === undefined || (!this.updateRefused && this.leg.remoteAllow?.includes('UPDATE') === true);
    let res: SipResponse | undefined;
    try {
      if (useUpdate) {
        // The dialog stays up on 408/481 so that the BYE below can still be sent (sec. 10).
        res = await this.leg.request('UPDATE', { headers, keepOnFailure: true });
      } else {
        const answer = await this.leg.reinvite(sdp, { headers, onResponse: (r) => (res = r) });
        if (answer !== undefined) this.hooks.answer?.(answer);
      }
    } catch (error) {
      if (this.stopped) return;
      // Glare (RFC 3261 sec. 14.1): another re-INVITE is in progress; try again in 2.1-4 s.
      if (error instanceof SipError && error.status === 491 && res === undefined) {
        this.refreshTimer = this.clock.setTimeout(() => void this.refresh(retries422), randomInt(2100, 4001));
        return;
      }
      if (!res) {
        this.logger.warn({ err: error }, 'session refresh failed');
        return;
      }
    }
    if (this.stopped || !res) return;
    if (res.status >= 200 && res.status < 300) {
      const n = negotiatedByResponse(res);
      if (!n) {
        this.logger.info({}, 'refresh answered without Session-Expires: session timer off (RFC 4028 sec. 7.2)');
        this.clear();
        return;
      }
      this.arm(n.seconds, n.refresher === 'uac');
      return;
    }
    if (res.status === 422 && retries422 < MAX_422_RETRIES) {
      const wanted = parseMinSe(res.headers.get('min-se'));
      if (wanted !== undefined && wanted > this.seconds) {
        this.minSe = wanted;
        this.seconds = wanted;
        return this.refresh(retries422 + 1);
      }
    }
    if (useUpdate && sdp !== undefined && (res.status === 405 || res.status === 501)) {
      // The peer listed UPDATE but does not take it in this dialog (RFC 3311 sec. 5.2): re-INVITE.
      this.logger.info({ status: res.status }, 'refresh UPDATE refused: refreshing by re-INVITE');
      this.updateRefused = true;
      return this.refresh(retries422);
    }
    if (res.status === 408 || res.status === 481) {
      this.hooks.expired('session-refresh-failed');
      return;
    }
    if (res.status === 491) {
      this.refreshTimer = this.clock.setTimeout(() => void this.refresh(retries422), randomInt(2100, 4001));
      return;
    }
    // Any other failure leaves the session as it was: the expiry timer still runs (sec. 10).
    this.logger.info({ status: res.status }, 'session refresh refused');
  }
}
