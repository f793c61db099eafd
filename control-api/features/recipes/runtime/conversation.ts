/**
 * The conversation surface moved to `core/ports/conversation.ts` so the voice pipeline in media/
 * can implement it without importing control-api; re-exported here so nothing else changes.
 */
export {
  CallEndedError,
  type Alternative,
  type PhraseGroup,
  type SpokenValue,
  throwIfEnded,
  type Conversation,
  type DtmfCollection,
  type Heard,
  type IgnoredWhy,
  type ListenExpectation,
  type ListenOptions,
  type SayOptions,
  type SayResult,
  type TransferResult,
} from '../../../../core/ports/conversation.js';
