/**
 * Web calls: a browser places a call over SIP/WebSocket (RFC 7118) with WebRTC media. Two ports
 * keep gateway/ free of business logic and of media relays:
 * - `WebCallAuthority` (control-api/ answers): whether the call token the browser presents allows
 *   this call, and where it goes (a tenant's number, or one of its recipes directly);
 * - `WebRtcBridge` (media/ implements it with rtpengine): turns the browser's ICE + DTLS-SRTP offer
 *   into plain RTP the platform's media speaks, and the platform's answer back into WebRTC.
 */

/** What a valid web call runs. */
export interface WebCallRoute {
  readonly tenantId: string;
  readonly recipeId: string;
  /** The number called, when the target is a number (its recipe and settings apply); null for a recipe target. */
  readonly numberId: string | null;
  readonly e164: string | null;
  readonly enabled: boolean;
  readonly language: string;
  readonly maxCallDurationMinutes: number;
  readonly endCallOnSilenceMinutes: number;
}

export type WebCallDecision =
  | { readonly ok: true; readonly route: WebCallRoute }
  /** `invalid`: bad, expired or forged token, or a target it was not issued for; `gone`: the target no longer exists. */
  | { readonly ok: false; readonly reason: 'invalid' | 'gone'; readonly detail: string };

export interface WebCallAuthority {
  /** `target` is the Request-URI user part: an E.164 number or `recipe-<id>`. */
  authorize(token: string, target: string): Promise<WebCallDecision>;
}

/** The dialog a bridged media session belongs to (the relay keys its state on these). */
export interface BridgeLeg {
  readonly callId: string;
  readonly sipCallId: string;
  readonly fromTag: string;
  readonly toTag: string;
}

export interface WebRtcBridge {
  /** The browser's offer (UDP/TLS/RTP/SAVPF) -> an RTP/AVP offer for the platform's media. */
  offer(leg: BridgeLeg, webrtcSdp: string): Promise<string>;
  /** The platform's RTP/AVP answer -> the answer for the browser (ICE, DTLS-SRTP, rtcp-mux). */
  answer(leg: BridgeLeg, plainSdp: string): Promise<string>;
  /** Frees the relay's session (call ended or set-up failed); never throws. */
  release(leg: BridgeLeg): Promise<void>;
}
