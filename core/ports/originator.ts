/**
 * Port the campaign scheduler dials through; the SIP gateway implements it (INVITE, ring timeout
 * with CANCEL per RFC 3261 sec. 9, digest challenges, outcome classification). Defined in core so
 * control-api never imports gateway.
 */

/** How the agent begins once the callee answers (spec: campaign Start logic). */
export type CallStartLogic =
  | { readonly mode: 'immediately' }
  /** Speak after voice activity detection hears the callee's greeting. */
  | { readonly mode: 'waitForGreeting' }
  | { readonly mode: 'waitSeconds'; readonly seconds: number };

/** Who the call belongs to; handed to the call so the recipe runtime can run the right flow. */
export interface CampaignCallContext {
  readonly tenantId: string;
  readonly campaignId: string;
  readonly messageId: string;
  /** 1 for the first attempt, 2 for the first retry, ... */
  readonly attempt: number;
  readonly recipeId: string;
  readonly variables: Readonly<Record<string, unknown>>;
}

export interface OriginateRequest {
  /** Caller ID: the campaign's number (E.164) and how it reaches the network. */
  readonly from: {
    readonly e164: string;
    readonly phoneNumberId: string;
    /** Custom SIP trunk the number belongs to; absent for provider numbers. */
    readonly sipTrunkId?: string | null;
  };
  /** Callee in E.164 (`+` and digits). */
  readonly to: string;
  /** Ring this long (15 to 30 s per the spec), then CANCEL and report `no-answer`. */
  readonly ringTimeoutMs: number;
  readonly startLogic: CallStartLogic;
  readonly context: CampaignCallContext;
  /** Aborting before an answer CANCELs the INVITE; after an answer it hangs up (BYE). */
  readonly signal: AbortSignal;
  /** Called once on the first provisional response showing the callee is alerted (180/183). */
  readonly onRinging?: () => void;
  /**
   * Awaited once, after the route and media are ready and right before the first INVITE is
   * handed to the transport: from then on the callee may ring. The campaign scheduler records
   * it durably here, so after a crash it knows which calls may have rung (never to be placed
   * again) and which never left (placed by another worker). A rejection cancels the dial with
   * no INVITE sent (outcome `failed`).
   */
  readonly beforeInvite?: () => Promise<void>;
}

/** How an answered call ended. */
export interface CallCompletion {
  readonly endedAt: number;
  readonly durationMs: number;
  /** Who or what ended it: `remote-bye`, `local-bye`, `max-duration`, `media-timeout`, ... */
  readonly reason: string;
}

export type OriginateResult =
  | {
      readonly outcome: 'answered';
      readonly sipStatus: number;
      readonly callId: string;
      readonly answeredAt: number;
      /** Settles when the call ends; never rejects (a failure mid-call is a completion reason). */
      readonly completion: Promise<CallCompletion>;
    }
  /** 486 Busy Here or 600 Busy Everywhere. */
  | { readonly outcome: 'busy'; readonly sipStatus: number; readonly reason?: string; readonly sipCallId?: string }
  /** Rang out: CANCELled after the ring timeout (the 487 is kept as sipStatus), or 408/480 from the far end. */
  | { readonly outcome: 'no-answer'; readonly sipStatus?: number; readonly reason?: string; readonly sipCallId?: string }
  /**
   * Anything else: 4xx-6xx finals, transport errors, no route, aborted before an answer.
   * `sipCallId` (all three): the Call-ID of the INVITE, when one went out.
   */
  | { readonly outcome: 'failed'; readonly sipStatus?: number; readonly reason: string; readonly cause?: unknown; readonly sipCallId?: string };

export type OriginateOutcome = OriginateResult['outcome'];

export interface Originator {
  /** Resolves with the outcome; rejects only on programming errors (bad input), never on call failures. */
  originate(request: OriginateRequest): Promise<OriginateResult>;
}
