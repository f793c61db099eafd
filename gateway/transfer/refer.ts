import type { Clock } from '../../core/clock.js';
import type { Dialog } from '../sip/dialog/dialog.js';
import type { ServerRequest } from '../sip/ua/server-request.js';

export type ReferResult =
  /** The transferee reached the target (a 2xx sipfrag). */
  | { readonly kind: 'transferred' }
  /** The REFER itself was refused: the peer will not transfer (a bridge may still work). */
  | { readonly kind: 'refused'; readonly status: number; readonly reason: string }
  /** The peer tried and the target failed (sipfrag 3xx-6xx), or no final NOTIFY came. */
  | { readonly kind: 'failed'; readonly status?: number; readonly reason: string };

export interface ReferOptions {
  readonly clock: Clock;
  /** Our Contact on the dialog's flow (a REFER creates a subscription: RFC 6665 sec. 4.1.2.1). */
  readonly contact: string;
  /** Referred-By (RFC 3892 sec. 3): who asked for the transfer. */
  readonly referredBy: string;
  /** Bound on the wait for a final NOTIFY. */
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
}

/** The status line of a message/sipfrag body (RFC 3420): `SIP/2.0 200 OK`. */
export function sipfragStatus(body: string): { status: number; reason: string } | undefined {
  const m = /^SIP\/2\.0\s+(\d{3})\s*([^\r\n]*)/.exec(body.trimStart());
  return m ? { status: Number(m[1]), reason: m[2] ?? '' } : undefined;
}

/**
 * Blind transfer as the transferor (RFC 3515, RFC 5589 sec. 6): REFER in the dialog with
 * Refer-To and Referred-By; a non-2xx answer is a refusal; after the 202 the implicit
 * subscription's NOTIFYs carry the progress as message/sipfrag (sec. 2.4.4, 2.4.5): 1xx wait,
 * 2xx success, 3xx-6xx failure; each NOTIFY is answered 200. `Subscription-State: terminated`
 * without a final status is a failure.
 */
export async function referTransfer(dialog: Dialog, target: string, o: ReferOptions): Promise<ReferResult> {
  let settle!: (r: ReferResult) => void;
  const done = new Promise<ReferResult>((resolve) => (settle = resolve));
  const onNotify = ({ request }: { request: ServerRequest }): void => {
    const req = request.request;
    const event = (req.headers.get('event') ?? '').trim().toLowerCase();
    if (!event.startsWith('refer')) {
      request.respond(489, { reason: 'Bad Event' });
      return;
    }
    request.respond(200);
    const frag = sipfragStatus(req.body.toString('utf8'));
    const state = (req.headers.get('subscription-state') ?? '').trim().toLowerCase();
    if (frag && frag.status >= 200 && frag.status < 300) settle({ kind: 'transferred' });
    else if (frag && frag.status >= 300) settle({ kind: 'failed', status: frag.status, reason: frag.reason });
    else if (state.startsWith('terminated')) settle({ kind: 'failed', reason: 'subscription terminated without a final status' });
  };
  const onDestroy = (): void => settle({ kind: 'failed', reason: 'the call ended during the transfer' });
  const onAbort = (): void => settle({ kind: 'failed', reason: 'transfer aborted' });
  // NOTIFYs may overtake the 202 on UDP: listen before sending.
  dialog.on('notify', onNotify);
  dialog.on('destroy', onDestroy);
  o.signal.addEventListener('abort', onAbort, { once: true });
  const timer = o.clock.setTimeout(() => settle({ kind: 'failed', reason: `no final NOTIFY within ${o.timeoutMs} ms` }), o.timeoutMs);
  try {
    const res = await dialog.request('REFER', {
      headers: [
        ['Refer-To', `<${target}>`],
        ['Referred-By', `<${o.referredBy}>`],
        ['Contact', `<${o.contact}>`],
      ],
    });
    if (res.status >= 300) return { kind: 'refused', status: res.status, reason: res.reason };
    return await done;
  } finally {
    o.clock.clearTimeout(timer);
    dialog.off('notify', onNotify);
    dialog.off('destroy', onDestroy);
    o.signal.removeEventListener('abort', onAbort);
  }
}
