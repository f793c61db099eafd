import type { Logger } from '../../core/logger.js';
import type { ActiveCall } from '../../core/ports/call-handler.js';
import type { CallTransfer, CallTransferOutcome } from '../../core/ports/call-transfer.js';
import type { TransferResult } from '../../core/ports/conversation.js';
import { PronunciationLexicon, type PronunciationRule } from '../speech/pronunciation.js';
import type { SttProvider, TtsProvider } from '../speech/speech-provider.js';
import type { EarlyAudio } from './early-audio.js';
import { PhoneConversation, type SpeechSettings, type TurnSettings } from './phone-conversation.js';

export interface VoiceSessionInput {
  readonly call: ActiveCall;
  readonly stt: SttProvider;
  readonly tts: TtsProvider;
  /** Voice, languages, speech profile name and the number's boosted keywords. */
  readonly speech: SpeechSettings;
  readonly turn: TurnSettings;
  /** The pronunciation entries the number names; none: text is spoken as written. */
  readonly rules: readonly PronunciationRule[];
  /** The caller's audio kept since answer: the conversation hears from there. */
  readonly early: EarlyAudio;
  /** The gateway's Transfer action; without it a transfer fails with a reason the block can say. */
  readonly transfer?: CallTransfer;
  /** Each transfer's outcome as the gateway reported it (the call record needs it). */
  readonly onTransfer: (outcome: CallTransferOutcome) => void;
  readonly log: Logger;
}

/**
 * The voice session of one answered call: the PhoneConversation built from its speech settings,
 * wired to the call (its media, signal, hang-up, caller-speech notice) and to the gateway's
 * transfer. The recipe run only talks to the Conversation it returns.
 */
export function voiceSession({ call, stt, tts, speech, turn, rules, early, transfer, onTransfer, log }: VoiceSessionInput): PhoneConversation {
  return new PhoneConversation({
    media: call.media,
    input: early.reader(),
    stt,
    tts,
    speech,
    turn,
    ...(rules.length > 0 ? { lexicon: new PronunciationLexicon(rules) } : {}),
    signal: call.signal,
    hangup: () => call.hangup('agent-closed'),
    onCallerSpeech: () => call.noteCallerSpeech(),
    onIgnoredUtterance: (text, why) => log.debug({ why, chars: text.length }, 'caller words ignored'),
    logger: log,
    // The Transfer block has already spoken the bridge message.
    transfer: async (target, _bridgeMessage, signal): Promise<TransferResult> => {
      if (!transfer) return { ok: false, reason: 'call transfer is not available on this gateway' };
      const outcome = await transfer.transfer(call.info.id, target, signal);
      onTransfer(outcome);
      return outcome.ok ? { ok: true } : { ok: false, reason: outcome.sipStatus ? `${outcome.reason} (SIP ${outcome.sipStatus})` : outcome.reason };
    },
  });
}
