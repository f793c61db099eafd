import type { DirectoryNumber, DirectoryTrunk } from '../../core/ports/call-directory.js';
import type { InboundCallInfo } from '../../core/ports/call-handler.js';
import type { CallMediaSession } from '../../core/ports/media.js';
import type { WebCallRoute } from '../../core/ports/web-call.js';
import type { SdpPath } from '../call/sdp-path.js';
import type { UasNegotiation } from '../sip/dialog/session-timer.js';
import type { ServerRequest } from '../sip/ua/server-request.js';

/** What the INVITE steps learn about one INVITE, step by step (invite-steps.ts, web-call-steps.ts). */
export interface InviteState {
  /**
   * The call's id from the INVITE's arrival on: every log line of the call, the media session,
   * the call record (the control plane stores the call under it) and the transfer API use it.
   */
  readonly callId: string;
  /** When the INVITE reached the steps (clock ms), for the INVITE-to-answer latency. */
  readonly arrivedAt: number;
  trunks: readonly DirectoryTrunk[];
  trusted: boolean;
  /** Where the call came from: the packet's source, or the carrier's address the edge passed on. */
  source?: string;
  number?: DirectoryNumber;
  trunk?: DirectoryTrunk;
  matchedBy?: InboundCallInfo['matchedBy'];
  release?: () => void;
  session?: CallMediaSession;
  answerSdp?: string;
  lateOffer?: boolean;
  /** Set when the call's SDP goes through the SRTP relay (srtp-step.ts). */
  sdpPath?: SdpPath;
  timer?: UasNegotiation;
  /** Set for a web call: what its call token allows (the number, or a recipe without one). */
  web?: WebCallRoute;
  /** Frees what the media set-up holds outside the media session (a relay's session): on failure, or when the call ends. */
  cleanup?: () => void;
}

export const inviteStates = new WeakMap<ServerRequest, InviteState>();
export const state = (sreq: ServerRequest): InviteState => {
  const s = inviteStates.get(sreq);
  if (!s) throw new Error('INVITE state missing: steps out of order');
  return s;
};

