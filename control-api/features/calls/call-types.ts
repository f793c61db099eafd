import type { IgnoredWhy } from '../../../core/ports/conversation.js';
import type { InsightParameter } from '../../model/domain/insight-parameter.js';
import type { TurnNote } from '../recipes/runtime/run-events.js';

/**
 * What a call record holds (issue: calls are stored with tenant, number, campaign and
 * `message_id`, direction, timestamps, outcome and SIP status, duration, disposition, variables,
 * transcript, recording reference and the analysis state).
 */
/** `web`: placed from a browser (sip.js over SIP/WebSocket, docs/sip-stack.md Web calls). */
export type CallDirection = 'inbound' | 'outbound' | 'simulation' | 'web';

/**
 * How the call ended from the telephony side. `completed` means it was answered and ran; the
 * others are the spec's retry outcomes (Busy, No-answer, Failed) plus a cancelled dial.
 */
export const callOutcomes = ['completed', 'busy', 'no_answer', 'failed', 'canceled'] as const;
export type CallOutcome = (typeof callOutcomes)[number];

export const analysisStates = ['pending', 'analyzing', 'completed', 'failed', 'skipped'] as const;
export type AnalysisState = (typeof analysisStates)[number];

/** One transcript line as stored; `interrupted` marks a Smart Interruption cut (spec: "Interrupted" tag). */
export interface TranscriptLine {
  /** Epoch milliseconds. */
  readonly at: number;
  readonly speaker: 'agent' | 'caller';
  readonly text: string;
  readonly blockId?: string;
  readonly dtmf?: boolean;
  readonly interrupted?: boolean;
  /** The part of an interrupted agent reply that was never played. */
  readonly unspoken?: string;
  /**
   * Caller words that did not drive the flow, and why: said over a line that takes no barge-in,
   * a backchannel, or said before the block that now listens (never taken as its answer).
   */
  readonly ignored?: IgnoredWhy;
}

/**
 * How a listening block handled a caller turn it did not simply act on (recipes/runtime
 * TurnNote, without the block id its step already carries). `heard` is caller speech.
 */
export type StepTurn = Omit<TurnNote, 'blockId'>;

/** One block the recipe visited, in order: the exit it left by, or how the call ended in it. */
export interface CallStep {
  readonly blockId: string;
  readonly type: string;
  readonly exit?: string;
  readonly end?: string;
  readonly turns: readonly StepTurn[];
}

/** Answering-machine detection on an outbound call: `unknown` is treated as a person. */
export const amdVerdicts = ['human', 'machine', 'unknown'] as const;
export type AmdVerdict = (typeof amdVerdicts)[number];

export interface AnsweringMachineResult {
  readonly verdict: AmdVerdict;
  /** Callee audio heard from answer until the verdict. */
  readonly afterMs: number;
}

export type InsightValue = string | number | boolean;

/** Extracted values by parameter name; null when the transcript did not give one. */
export type InsightValues = Readonly<Record<string, InsightValue | null>>;

export interface CallStart {
  /**
   * The record's id. The gateway passes its own call id, so the call has one id from SIP to
   * record to logs; generated when absent (simulations, dials that never connected).
   */
  readonly id?: string;
  /** SIP Call-ID of the call's dialog. */
  readonly sipCallId?: string;
  /** The SIP facts a trace would show (migration 0331): transport, the far end's address, the SDP codec. */
  readonly sip?: SipFacts;
  readonly tenantId: string;
  readonly direction: CallDirection;
  readonly startedAt: Date;
  readonly phoneNumberId?: string;
  /** The platform's number (E.164). */
  readonly phoneNumber?: string;
  /** The other party: the campaign contact or the caller. */
  readonly remoteNumber?: string;
  readonly campaignId?: string;
  /** The SendMessage `message_id` this call serves (outbound campaign calls). */
  readonly messageId?: string;
  /** The campaign attempt this call is (1 = first call, 2 = first retry, ...). */
  readonly attempt?: number;
  readonly recipeId?: string;
  readonly language?: string;
  readonly variables?: Readonly<Record<string, unknown>>;
}

export interface CallEnd {
  readonly endedAt: Date;
  readonly outcome: CallOutcome;
  readonly answeredAt?: Date;
  /** Final SIP response status of the INVITE (200 for answered calls, 486 busy, ...). */
  readonly sipStatus?: number;
  /** Why the conversation ended (RecipeRun end reason: closed, callerHangup, transferred, ..., or a gateway limit: silenceTimeout, maxDuration, ...). */
  readonly endReason?: string;
  /** Close block disposition tag. */
  readonly disposition?: string;
  /** Recipe variables at the end of the call. */
  readonly variables?: Readonly<Record<string, unknown>>;
  readonly transcript?: readonly TranscriptLine[];
  /** The path the recipe took (blocks, exits, reprompts and confirmations). */
  readonly steps?: readonly CallStep[];
  /** Where the recording is, relative to the recordings directory (media/ writes it). */
  readonly recordingRef?: string;
  /** Answering-machine detection (screened outbound calls only). */
  readonly answeringMachine?: AnsweringMachineResult;
  /**
   * The insight parameters to extract. Default: the recipe's `globalSettings.insights` as stored
   * at hang-up (a snapshot, so editing the recipe later does not change a running analysis).
   */
  readonly insightParameters?: readonly InsightParameter[];
}

export interface SipFacts {
  /** udp, tcp, tls, ws or wss. */
  readonly transport?: string;
  /** The far end's signalling address (the caller's source, or the trunk we dialled through). */
  readonly remoteAddress?: string;
  /** The audio codec negotiated in SDP, e.g. PCMU (the media session's name for it). */
  readonly codec?: string;
}

export interface CallRecord {
  readonly id: string;
  readonly sipCallId: string | null;
  readonly sipTransport: string | null;
  readonly sipRemoteAddress: string | null;
  readonly codec: string | null;
  readonly tenantId: string;
  readonly direction: CallDirection;
  readonly phoneNumberId: string | null;
  readonly phoneNumber: string | null;
  readonly remoteNumber: string | null;
  readonly campaignId: string | null;
  readonly messageId: string | null;
  readonly attempt: number | null;
  readonly recipeId: string | null;
  readonly language: string | null;
  readonly startedAt: Date;
  readonly answeredAt: Date | null;
  readonly endedAt: Date | null;
  readonly status: 'in_progress' | 'ended';
  readonly outcome: CallOutcome | null;
  readonly sipStatus: number | null;
  readonly durationMs: number | null;
  readonly endReason: string | null;
  readonly disposition: string | null;
  readonly variables: Readonly<Record<string, unknown>>;
  readonly recordingRef: string | null;
  readonly answeringMachine: AnsweringMachineResult | null;
  readonly analysis: {
    readonly status: AnalysisState;
    readonly error: string | null;
    readonly completedAt: Date | null;
    readonly values: InsightValues | null;
  };
}
