import { z } from 'zod';
import { requiredText, resourceName } from './common.js';

/** Pronunciation entry (spec: "Word Management"). Natural key: the word as written. */
export const pronunciationEntrySchema = z.object({
  /** The word as written in Recipe scripts. */
  word: requiredText('word', 100).refine((w) => w.trim() === w, { error: 'word must not start or end with a space' }),
  /** How it should sound (plain respelling or IPA). */
  pronunciation: requiredText('pronunciation', 200),
  /** When true the rule applies only to this exact casing. */
  caseSensitive: z.boolean({ error: 'caseSensitive must be true or false' }).default(false),
  /** Speech profiles (by name) the rule applies to; empty means all of them. */
  speechProfiles: z.array(resourceName('speechProfiles entry')).max(100, { error: 'speechProfiles must have at most 100 entries' }).default([]),
});
export type PronunciationEntrySpec = z.infer<typeof pronunciationEntrySchema>;
