import type { CallMediaSession, MediaDtmfEvent } from './media.js';
import type { CallCompletion, OriginateRequest } from './originator.js';

/** Who an inbound call is for, as the gateway's router identified it. */
export interface InboundCallInfo {
  /** The gateway's id for the call (unique per process run). */
  readonly id: string;
  /** SIP Call-ID of the inbound dialog. */
  readonly sipCallId: string;
  readonly tenantId: string;
  /** The number called; null for a web call placed to a recipe directly (core/ports/web-call.ts). */
  readonly numberId: string | null;
  /** The number called, E.164. */
  readonly dialled: string;
  /** The caller: From user part (usually a number), as sent. */
  readonly caller: string;
  readonly trunkId: string | null;
  readonly recipeId: string;
  readonly language: string;
  /** How the number was found: Request-URI user, To user, the trunk's Extension Number, or the registered trunk's own number. */
  readonly matchedBy: 'request-uri' | 'to' | 'extension' | 'registration';
  readonly transport: string;
  readonly remoteAddress: string;
  readonly startedAt: number;
  /** `web`: placed from a browser over SIP/WebSocket with a call token; absent: a phone call. */
  readonly channel?: 'web';
}

export interface ActiveCallEvents {
  /** A key press, from RFC 4733 media events, SIP INFO (application/dtmf-relay) or a provider's media stream. */
  dtmf: [MediaDtmfEvent & { readonly via: 'rtp' | 'info' | 'stream' }];
}

/** An answered call as the control plane sees it: audio, DTMF, hang-up, and an end signal. */
export interface ActiveCall {
  readonly info: InboundCallInfo;
  readonly media: CallMediaSession;
  /** Aborted when the call ends for any reason: every task of the call should hang off it. */
  readonly signal: AbortSignal;
  /** Settles once when the call has ended. */
  readonly ended: Promise<CallCompletion>;
  /** Ends the call with BYE; `reason` is kept as the completion reason. */
  hangup(reason?: string): Promise<void>;
  /** Tells the gateway the caller spoke, which restarts the end-call-on-silence timer. */
  noteCallerSpeech(): void;
  on<K extends keyof ActiveCallEvents>(event: K, listener: (...args: ActiveCallEvents[K]) => void): unknown;
  off<K extends keyof ActiveCallEvents>(event: K, listener: (...args: ActiveCallEvents[K]) => void): unknown;
}

/**
 * Decides what an answered call runs (the recipe); the telephony transports (SIP, the cloud
 * providers' media streams) know nothing of recipes. An inbound call comes alone, a campaign call
 * with the dial request that placed it.
 */
export interface CallHandler {
  handle(call: ActiveCall, outbound?: OriginateRequest): void | Promise<void>;
}
