import type { Clock } from '../../core/clock.js';
import type { Call } from './call.js';
import { SessionTimer, type SessionTimerPolicy, type UasNegotiation } from '../sip/dialog/session-timer.js';

/**
 * The call's RFC 4028 timer (sec. 10): armed when the 2xx carried Session-Expires (refresher=uas:
 * we refresh), otherwise only watching for a peer refresh that starts one. A refresh re-INVITE
 * offers our current SDP again; expiry or a failed refresh ends the call with BYE.
 */
export function startSessionTimer(
  call: Call,
  negotiated: { readonly seconds: number; readonly weRefresh: boolean } | Extract<UasNegotiation, { kind: 'active' }> | undefined,
  deps: { readonly clock: Clock; readonly sessionTimer: SessionTimerPolicy },
): SessionTimer {
  // The call's logger: every line carries its call id and SIP Call-ID.
  const timer = new SessionTimer(call.leg, deps.clock, call.log, deps.sessionTimer, {
    offer: () => call.sdp.localSdp,
    answer: (sdp) => {
      void call.sdp.applyAnswer(sdp).then((applied) => {
        if (!applied.ok) call.log.info({ reason: applied.message }, 'answer to a session refresh not applied');
      });
    },
    expired: (why) => void call.hangup(why),
  });
  if (negotiated) timer.arm(negotiated.seconds, 'weRefresh' in negotiated ? negotiated.weRefresh : negotiated.refresher === 'uas');
  return timer;
}
