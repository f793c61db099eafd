import type { IgnoredWhy } from '../../../../core/ports/conversation.js';

/** What a recipe run reports as it goes; the transcript and the simulator are built from these. */
export type Speaker = 'agent' | 'caller';

export interface TranscriptEntry {
  /** Epoch ms: an agent line when it began playing, caller words when they were recognised. */
  readonly at: number;
  readonly speaker: Speaker;
  readonly text: string;
  readonly blockId: string;
  readonly dtmf?: boolean;
  /** Agent reply cut short by the caller (spec: Smart Interruption "Interrupted" tag). */
  readonly interrupted?: boolean;
  readonly unspoken?: string;
  /** Caller words that did not drive the flow, and why (spec: barge-in disabled still transcribes). */
  readonly ignored?: IgnoredWhy;
  /** The recogniser's confidence in a caller turn, when it reported one. */
  readonly confidence?: number;
}

/**
 * How a listening block handled a caller turn it did not simply act on: a reprompt (nothing
 * usable heard, or too unsure), a nudge after silence, a question answered from knowledge, a
 * "Just to check: ...?" and its answer, the closing line said over (the run came back).
 */
export interface TurnNote {
  readonly blockId: string;
  readonly kind: 'reprompt' | 'nudge' | 'answered' | 'confirm' | 'confirmed' | 'denied' | 'saidOver';
  readonly reason?: 'noMatch' | 'lowConfidence' | 'notUnderstood' | 'amountInPieces' | 'missingValues' | 'silence';
  readonly heard?: string;
  readonly confidence?: number;
}

/** One block visited: how it was left (an exit or the end of the call) and its turn notes. */
export interface RunStep {
  readonly blockId: string;
  readonly type: string;
  exit?: string;
  end?: EndReason;
  readonly turns: TurnNote[];
}

export type EndReason = 'closed' | 'transferred' | 'callerHangup' | 'exitNotConnected' | 'error' | 'stepLimit';

export interface RunEnd {
  readonly reason: EndReason;
  readonly disposition?: string;
  readonly transferTarget?: string;
  readonly lastBlockId?: string;
  readonly lastExit?: string;
}

export interface RunEvents {
  blockEntered: [{ readonly blockId: string; readonly type: string }];
  blockExited: [{ readonly blockId: string; readonly type: string; readonly exit?: string; readonly end?: EndReason }];
  variableSet: [{ readonly blockId: string; readonly name: string; readonly value: unknown }];
  utterance: [TranscriptEntry];
  turn: [TurnNote];
  /** Recoverable problems: a missing template variable, a refused URL, a provider failure. */
  warning: [{ readonly blockId: string; readonly message: string }];
  error: [{ readonly blockId: string; readonly message: string }];
  ended: [RunEnd];
}
