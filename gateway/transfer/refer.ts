import type { Clock, TimerHandle } from '../../core/clock.js';
import type { Dialog } from '../sip/dialog/dialog.js';
import type { TimerValues } from '../sip/transaction/timers.js';
import type { ServerRequest } from '../sip/ua/server-request.js';
import { readReferNotify } from './refer-notify.js';

export { sipfragStatus } from './refer-notify.js';

export type ReferResult =
  /** The transferee reached the target (a 2xx sipfrag). */
  | { readonly kind: 'transferred' }
  /** The REFER itself was refused: the peer will not transfer (a bridge may still work). */
  | { readonly kind: 'refused'; readonly status: number; readonly reason: string }
  /** The transferee tried and the target failed: the sipfrag's 3xx-6xx. */
  | { readonly kind: 'failed'; readonly status: number; readonly reason: string }
  /**
   * The REFER was accepted but no final status came: the wait ran out, the subscription ended or
   * expired without one, the call ended or the transfer was aborted. The transferee may or may not
   * have reached the target.
   */
  | { readonly kind: 'unconfirmed'; readonly reason: string };

export interface ReferOptions {
  readonly clock: Clock;
  /** Our Contact on the dialog's flow (a REFER creates a subscription: RFC 6665 sec. 4.1.2.1). */
  readonly contact: string;
  /** Referred-By (RFC 3892 sec. 3): who asked for the transfer. */
  readonly referredBy: string;
  /** How long after the 2xx to the REFER a final NOTIFY is waited for (`finalNotifyWaitMs`). */
  readonly timeoutMs: number;
  /** Time allowed past the subscription's expiry for the notifier's terminating NOTIFY (`notifyGraceMs`). */
  readonly graceMs: number;
  readonly signal: AbortSignal;
}

/**
 * The default wait for the final NOTIFY. The transferee INVITEs the target after its 202; against a
 * target that stays silent that INVITE ends only at Timer B, 64*T1 (RFC 3261 sec. 17.1.1.2: 32 s
 * with T1 = 500 ms), after which the NOTIFY with the 408 still has to reach us. So the wait is
 * 64*T1 plus `notifyGraceMs`: 36 s with the RFC's T1.
 */
export function finalNotifyWaitMs(t: TimerValues): number {
  return 64 * t.T1 + notifyGraceMs(t);
}

/** A NOTIFY over UDP may need its retransmissions at T1, 2*T1 and 4*T1 (sec. 17.1.2.2): 8*T1 covers them. */
export function notifyGraceMs(t: TimerValues): number {
  return 8 * t.T1;
}

/**
 * Blind transfer as the transferor (RFC 3515, RFC 5589 sec. 6): REFER in the dialog with
 * Refer-To and Referred-By; a non-2xx answer is a refusal. After the 2xx the implicit
 * subscription's NOTIFYs (read by `readReferNotify`) carry the transferee's progress as
 * message/sipfrag (sec. 2.4.4, 2.4.5): 1xx progress, 2xx success, 3xx-6xx failure; a terminated
 * subscription without a final status, or none within the wait, is `unconfirmed`.
 *
 * The wait: `timeoutMs` from the 2xx. A NOTIFY's `expires` (RFC 6665 sec. 4.1.3) can shorten it,
 * since the notifier ends the subscription then (we allow `graceMs` for that NOTIFY); once the
 * target answers provisionally (sipfrag 18x) Timer B no longer bounds the transferee's INVITE, so
 * the wait is stretched to the subscription's expiry when that is later. Once we stop listening,
 * a later NOTIFY gets 481, which ends the subscription at the notifier (RFC 6665 sec. 4.1.3).
 */
export async function referTransfer(dialog: Dialog, target: string, o: ReferOptions): Promise<ReferResult> {
  let settle!: (r: ReferResult) => void;
  const done = new Promise<ReferResult>((resolve) => (settle = resolve));
  /** CSeq of our REFER: an `id` in the NOTIFY's Event names the REFER it reports on (RFC 3515 sec. 2.4.6). */
  let referCseq = dialog.localSeq + 1;
  let timer: TimerHandle | undefined;
  let deadline: number | undefined;
  let started = o.clock.now();
  const armAt = (at: number): void => {
    deadline = at;
    if (timer) o.clock.clearTimeout(timer);
    timer = o.clock.setTimeout(() => settle({ kind: 'unconfirmed', reason: `no final NOTIFY: the REFER subscription gave no outcome within ${at - started} ms` }), Math.max(0, at - o.clock.now()));
  };
  const onNotify = ({ request }: { request: ServerRequest }): void => {
    const reading = readReferNotify(request.request, referCseq);
    request.respond(reading.status, { ...(reading.reason ? { reason: reading.reason } : {}), ...(reading.headers ? { headers: reading.headers } : {}) });
    const news = reading.news;
    if (!news) return;
    if (news.kind === 'final') {
      settle(news.status < 300 ? { kind: 'transferred' } : { kind: 'failed', status: news.status, reason: news.reason });
      return;
    }
    if (news.kind === 'terminated') {
      settle({ kind: 'unconfirmed', reason: `the REFER subscription ended${news.reason ? ` (${news.reason})` : ''} without a final status` });
      return;
    }
    if (news.expiresSeconds === undefined) return;
    const expiry = { at: o.clock.now() + news.expiresSeconds * 1000 + o.graceMs, status: news.status };
    // A NOTIFY handled before the REFER's 2xx continuation (UDP reordering, or the same read)
    // must not lose its expiry: it applies once the default wait is armed.
    if (deadline === undefined) early = expiry;
    else applyExpiry(expiry);
  };
  const applyExpiry = ({ at, status }: { at: number; status: number }): void => {
    if (deadline !== undefined && (at < deadline || (status > 100 && at > deadline))) armAt(at);
  };
  let early: { at: number; status: number } | undefined;
  const onDestroy = (): void => settle({ kind: 'unconfirmed', reason: 'the call ended before the transfer reported an outcome' });
  const onAbort = (): void => settle({ kind: 'unconfirmed', reason: 'transfer aborted before it reported an outcome' });
  // NOTIFYs may overtake the 202 on UDP: listen before sending.
  dialog.on('notify', onNotify);
  dialog.on('destroy', onDestroy);
  o.signal.addEventListener('abort', onAbort, { once: true });
  try {
    const sending = dialog.request('REFER', {
      headers: [
        ['Refer-To', `<${target}>`],
        ['Referred-By', `<${o.referredBy}>`],
        ['Contact', `<${o.contact}>`],
      ],
    });
    referCseq = dialog.localSeq;
    const res = await sending;
    if (res.status >= 300) return { kind: 'refused', status: res.status, reason: res.reason };
    started = o.clock.now();
    if (deadline === undefined) armAt(started + o.timeoutMs);
    if (early) applyExpiry(early);
    return await done;
  } finally {
    if (timer) o.clock.clearTimeout(timer);
    dialog.off('notify', onNotify);
    dialog.off('destroy', onDestroy);
    o.signal.removeEventListener('abort', onAbort);
  }
}
