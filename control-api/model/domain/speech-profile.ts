import { z } from 'zod';
import { languageTag, requiredText, resourceName, tagList, text } from './common.js';

/** Speech profile (spec: "Speech profile" table): one text-to-speech voice a number can use. */

export const genders = ['male', 'female'] as const;
export type Gender = (typeof genders)[number];

/** Text-to-speech providers a profile may name; `espeak-ng` is the offline default. */
export const ttsProviders = ['espeak-ng', 'google', 'azure', 'amazon-polly', 'elevenlabs', 'cartesia', 'deepgram', 'sarvam'] as const;

export const speechProfileSchema = z.object({
  name: resourceName('name'),
  description: text('description', 500).default(''),
  /** Language and regional accent, e.g. `en-IN`, `hi-IN`, `ar-AE`. */
  language: languageTag('language'),
  gender: z.enum(genders, { error: "gender must be 'male' or 'female'" }),
  /** Skills tags such as Multi-lingual, Standard, Indian. */
  tags: tagList('tags', 20).default([]),
  provider: z.enum(ttsProviders, { error: `provider must be one of ${ttsProviders.join(', ')}` }),
  /** The provider's own voice identifier. */
  voiceName: requiredText('voiceName', 200),
  favourite: z.boolean({ error: 'favourite must be true or false' }).default(false),
});
export type SpeechProfileSpec = z.infer<typeof speechProfileSchema>;

/** Dashboard filters: Gender (Male, Female, All), Language and Accent, Skills tags. */
export const speechProfileFilterSchema = z.object({
  gender: z.enum([...genders, 'all'], { error: "gender filter must be 'male', 'female' or 'all'" }).default('all'),
  language: z.string().max(35).optional(),
  tags: z.array(z.string()).default([]),
  favouritesOnly: z.boolean().default(false),
});
export type SpeechProfileFilter = z.input<typeof speechProfileFilterSchema>;

/**
 * Filter semantics: language matches the tag or its primary subtag (`en` finds `en-IN`); every
 * requested tag must be present (case-insensitive), because the dashboard narrows with each tag.
 */
export function matchesSpeechProfileFilter(profile: SpeechProfileSpec, input: SpeechProfileFilter): boolean {
  const filter = speechProfileFilterSchema.parse(input);
  if (filter.gender !== 'all' && profile.gender !== filter.gender) return false;
  if (filter.favouritesOnly && !profile.favourite) return false;
  if (filter.language) {
    const want = filter.language.toLowerCase();
    const have = profile.language.toLowerCase();
    if (have !== want && !have.startsWith(`${want}-`)) return false;
  }
  const tags = new Set(profile.tags.map((t) => t.toLowerCase()));
  return filter.tags.every((t) => tags.has(t.toLowerCase()));
}
