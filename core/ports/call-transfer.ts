/**
 * The Transfer block's action on a phone call (spec: Transfer block): bridge the caller to a SIP
 * URI or an E.164 number. The gateway implements it (REFER when the peer supports it, else a
 * B2BUA bridge); the recipe runtime routes `ok: false` to the block's `failed` exit.
 */

export type CallTransferOutcome =
  /**
   * `refer`: the peer took the call over (RFC 3515) and our leg was hung up; `bridge`: both legs
   * relayed by us; `provider`: a cloud telephony provider dialled the target and bridged the
   * caller itself, and our media stream left the call.
   */
  | { readonly ok: true; readonly method: 'refer' | 'bridge' | 'provider' }
  /** The target did not take the call (busy, no answer, refused); the caller is still on the line. */
  | {
      readonly ok: false;
      readonly reason: string;
      readonly sipStatus?: number;
      /**
       * The peer accepted our REFER but never reported how it ended (RFC 3515 NOTIFY): the caller
       * may or may not have reached the target. A call record must not call this completed.
       */
      readonly unconfirmed?: boolean;
      /** The error behind the failure, when one was thrown; the gateway has logged it once. */
      readonly cause?: unknown;
    };

export interface CallTransfer {
  /** `callId` is ActiveCall.info.id; `target` a sip:/sips: URI or an E.164 number (`+` and digits). */
  transfer(callId: string, target: string, signal: AbortSignal): Promise<CallTransferOutcome>;
}
