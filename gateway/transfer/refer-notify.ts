import { SipParseError } from '../sip/message/errors.js';
import type { SipRequest } from '../sip/message/message.js';
import { Params, parseParamsAt } from '../sip/message/params.js';

/** The status line of a message/sipfrag body (RFC 3420): `SIP/2.0 200 OK`. */
export function sipfragStatus(body: string): { status: number; reason: string } | undefined {
  const m = /^SIP\/2\.0\s+(\d{3})\s*([^\r\n]*)/.exec(body.trimStart());
  return m ? { status: Number(m[1]), reason: m[2] ?? '' } : undefined;
}

/** What a NOTIFY of the implicit REFER subscription tells the REFER-issuer. */
export type ReferNews =
  /** The transferee's request to the target is under way (sipfrag 1xx). `expiresSeconds`: the subscription's remaining life. */
  | { readonly kind: 'progress'; readonly status: number; readonly expiresSeconds: number | undefined }
  /** The transferee's request to the target ended with this final status (sipfrag 2xx-6xx). */
  | { readonly kind: 'final'; readonly status: number; readonly reason: string }
  /** The subscription ended without a final status (RFC 6665 sec. 4.1.3: reason noresource, timeout, rejected...). */
  | { readonly kind: 'terminated'; readonly reason: string | undefined };

export interface NotifyReading {
  /** How to answer the NOTIFY (RFC 6665 sec. 4.1.3, 8.2.1; RFC 3261 sec. 21.4.13). */
  readonly status: 200 | 400 | 415 | 481 | 489;
  readonly reason?: string;
  readonly headers?: ReadonlyArray<readonly [string, string]>;
  /** Undefined when the NOTIFY is not about this subscription or says nothing usable. */
  readonly news: ReferNews | undefined;
}

/** `token *( ";" generic-param )`, as Event (RFC 6665 sec. 8.2.1) and Subscription-State (sec. 8.2.3) are. */
function tokenWithParams(raw: string): { token: string; params: Params } | undefined {
  const value = raw.trim();
  const semi = value.indexOf(';');
  const token = (semi < 0 ? value : value.slice(0, semi)).trim().toLowerCase();
  const params = new Params();
  try {
    if (semi >= 0 && parseParamsAt(value, semi, params) !== value.length) return undefined;
  } catch (error) {
    if (error instanceof SipParseError) return undefined;
    throw error;
  }
  return token ? { token, params } : undefined;
}

/**
 * Reads one NOTIFY as the REFER-issuer of the REFER whose CSeq is `referCseq`:
 * - `Event` must be the `refer` package (else 489, RFC 6665 sec. 8.2.1 / 4.1.3); an `id` naming
 *   another REFER of the dialog is another subscription (481, RFC 3515 sec. 2.4.6);
 * - `Subscription-State` is required (400, RFC 6665 sec. 8.2.3): `active`/`pending` with `expires`
 *   give the subscription's life, `terminated` ends it (sec. 4.1.3);
 * - the body is message/sipfrag with the status line of the transferee's request (RFC 3515 sec.
 *   2.4.5, RFC 3420); another type is answered 415 with Accept, a terminated state still counts.
 * A final sipfrag status is the outcome whatever the state says (the notifier should terminate with it).
 */
export function readReferNotify(req: SipRequest, referCseq: number): NotifyReading {
  const event = tokenWithParams(req.headers.get('event') ?? '');
  if (!event || event.token !== 'refer') return { status: 489, reason: 'Bad Event', headers: [['Allow-Events', 'refer']], news: undefined };
  const id = event.params.get('id');
  if (id !== undefined && id !== null && id !== String(referCseq)) return { status: 481, reason: 'Subscription does not exist', news: undefined };
  const rawState = req.headers.get('subscription-state');
  const state = rawState === undefined ? undefined : tokenWithParams(rawState);
  if (!state) return { status: 400, reason: rawState === undefined ? 'Missing Subscription-State' : 'Bad Subscription-State', news: undefined };
  const terminated = state.token === 'terminated';
  const type = (req.contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  const hasBody = req.body.length > 0;
  if (hasBody && type !== 'message/sipfrag') {
    const news = terminated ? { kind: 'terminated' as const, reason: state.params.get('reason') ?? undefined } : undefined;
    return { status: 415, reason: 'Unsupported Media Type', headers: [['Accept', 'message/sipfrag']], news };
  }
  const frag = hasBody ? sipfragStatus(req.body.toString('utf8')) : undefined;
  if (frag && frag.status >= 200) return { status: 200, news: { kind: 'final', status: frag.status, reason: frag.reason } };
  if (terminated) return { status: 200, news: { kind: 'terminated', reason: state.params.get('reason') ?? undefined } };
  if (hasBody && !frag) return { status: 400, reason: 'Bad message/sipfrag', news: undefined };
  const expires = state.params.get('expires');
  const seconds = expires && /^[0-9]{1,10}$/.test(expires) ? Number(expires) : undefined;
  return { status: 200, news: frag ? { kind: 'progress', status: frag.status, expiresSeconds: seconds } : undefined };
}
