/** What a recipe run reports as it goes; the transcript and the simulator are built from these. */
export type Speaker = 'agent' | 'caller';

export interface TranscriptEntry {
  readonly at: number;
  readonly speaker: Speaker;
  readonly text: string;
  readonly blockId: string;
  readonly dtmf?: boolean;
  /** Agent reply cut short by the caller (spec: Smart Interruption "Interrupted" tag). */
  readonly interrupted?: boolean;
  readonly unspoken?: string;
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
  /** Recoverable problems: a missing template variable, a refused URL, a provider failure. */
  warning: [{ readonly blockId: string; readonly message: string }];
  error: [{ readonly blockId: string; readonly message: string }];
  ended: [RunEnd];
}
