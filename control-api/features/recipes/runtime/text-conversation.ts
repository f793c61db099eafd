import { CallEndedError, type Conversation, type Heard, type ListenOptions, type SayOptions, type SayResult, type TransferResult } from '../../../../core/ports/conversation.js';

/**
 * The text channel: the agent's lines go to `onSay`, the caller's turns come from `nextTurn`
 * (a terminal prompt, an HTTP session or a test script). No audio, same recipe semantics.
 */
export type CallerTurn = Heard | { readonly kind: 'hangup' };

export interface TextConversationOptions {
  readonly nextTurn: (signal: AbortSignal) => Promise<CallerTurn>;
  readonly onSay?: (text: string) => void;
  /** Decides transfers; default: every transfer succeeds. */
  readonly onTransfer?: (target: string, bridgeMessage: string) => Promise<TransferResult> | TransferResult;
  /** Told when the caller side hangs up, so the run can be cancelled. */
  readonly onCallerHangup?: () => void;
}

export class TextConversation implements Conversation {
  readonly agentLines: string[] = [];
  hungUp = false;
  transferredTo: string | undefined;

  constructor(private readonly options: TextConversationOptions) {}

  async say(text: string, { signal }: SayOptions): Promise<SayResult> {
    if (signal.aborted || this.hungUp) throw new CallEndedError();
    this.agentLines.push(text);
    this.options.onSay?.(text);
    return { interrupted: false };
  }

  /** Collects the pieces into one line: text has no audio to start early, but the path is the same. */
  async sayStream(pieces: AsyncIterable<string>, options: SayOptions): Promise<SayResult & { text: string }> {
    let text = '';
    for await (const piece of pieces) text += piece;
    const trimmed = text.trim();
    if (trimmed === '') return { interrupted: false, text: '' };
    return { ...(await this.say(trimmed, options)), text: trimmed };
  }

  async listen({ signal }: ListenOptions): Promise<Heard> {
    if (signal.aborted || this.hungUp) throw new CallEndedError();
    const turn = await this.options.nextTurn(signal);
    if (turn.kind === 'hangup') {
      this.hungUp = true;
      this.options.onCallerHangup?.();
      throw new CallEndedError('caller hung up');
    }
    return turn;
  }

  /** The Transfer block speaks the bridge message itself (so it is in the transcript). */
  async transfer(target: string, bridgeMessage: string, signal: AbortSignal): Promise<TransferResult> {
    if (signal.aborted || this.hungUp) throw new CallEndedError();
    const result = (await this.options.onTransfer?.(target, bridgeMessage)) ?? { ok: true };
    if (result.ok) this.transferredTo = target;
    return result;
  }

  async hangup(): Promise<void> {
    this.hungUp = true;
  }
}

/** Caller turns from a fixed list; running out of turns is a caller hangup. */
export function scriptedTurns(turns: readonly CallerTurn[]): (signal: AbortSignal) => Promise<CallerTurn> {
  let index = 0;
  return async () => turns[index++] ?? { kind: 'hangup' };
}
