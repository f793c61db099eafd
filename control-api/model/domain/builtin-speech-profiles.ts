import type { SpeechProfileSpec } from './speech-profile.js';

/**
 * The platform's built-in speech profiles (spec: "Custom-added profiles can be edited or
 * deleted", so the others are the platform's own): every tenant sees them beside its custom
 * profiles, may use them by name like any profile (a number's `voice`, a pronunciation entry's
 * `speechProfiles`) and may star them, but nobody can edit or delete them.
 *
 * They are the offline espeak-ng voices the platform ships with (media/speech/espeak-tts.ts): the
 * languages the architecture names (English, the Indian languages, Arabic), each with espeak-ng's
 * default (male) voice and its `+f3` female variant. No cloud voice is built in: the cloud
 * adapters (media/speech/http-tts.ts) define no default voice of their own and speak only with
 * the tenant's credentials, so a cloud voice is a custom profile naming the provider's voice id.
 *
 * Ids are fixed (a reserved UUID range no random v4 UUID falls in) and names never change: both
 * are references. Add entries at the end; never renumber or rename one.
 */
export interface BuiltInSpeechProfile {
  readonly id: string;
  readonly spec: SpeechProfileSpec;
}

interface Language {
  readonly tag: string;
  readonly label: string;
  readonly voice: string;
  readonly indian: boolean;
}

// espeak-ng voice names as `espeak-ng --voices` lists them; `en` is its British-style English,
// the closest it has to Indian English (media/speech/espeak-tts.ts maps en-IN to it too).
const languages: readonly Language[] = [
  { tag: 'en-US', label: 'English US', voice: 'en-us', indian: false },
  { tag: 'en-IN', label: 'English India', voice: 'en', indian: true },
  { tag: 'hi-IN', label: 'Hindi', voice: 'hi', indian: true },
  { tag: 'bn-IN', label: 'Bengali', voice: 'bn', indian: true },
  { tag: 'ta-IN', label: 'Tamil', voice: 'ta', indian: true },
  { tag: 'te-IN', label: 'Telugu', voice: 'te', indian: true },
  { tag: 'mr-IN', label: 'Marathi', voice: 'mr', indian: true },
  { tag: 'gu-IN', label: 'Gujarati', voice: 'gu', indian: true },
  { tag: 'kn-IN', label: 'Kannada', voice: 'kn', indian: true },
  { tag: 'ml-IN', label: 'Malayalam', voice: 'ml', indian: true },
  { tag: 'pa-IN', label: 'Punjabi', voice: 'pa', indian: true },
  { tag: 'ur-IN', label: 'Urdu', voice: 'ur', indian: true },
  { tag: 'ar', label: 'Arabic', voice: 'ar', indian: false },
];

const builtInId = (n: number): string => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;

function profile(n: number, language: Language, gender: 'male' | 'female'): BuiltInSpeechProfile {
  const voiceName = gender === 'male' ? language.voice : `${language.voice}+f3`;
  return {
    id: builtInId(n),
    spec: {
      name: `${language.label} ${gender === 'male' ? 'Male' : 'Female'} (espeak-ng)`,
      description: `Built-in offline voice (espeak-ng '${voiceName}'): always available, no provider account needed`,
      language: language.tag,
      gender,
      tags: ['Standard', 'Offline', ...(language.indian ? ['Indian'] : [])],
      provider: 'espeak-ng',
      voiceName,
      favourite: false,
    },
  };
}

export const builtInSpeechProfiles: readonly BuiltInSpeechProfile[] = languages.flatMap((language, i) => [
  profile(2 * i + 1, language, 'male'),
  profile(2 * i + 2, language, 'female'),
]);

const byId = new Map(builtInSpeechProfiles.map((p) => [p.id.toLowerCase(), p]));
const byName = new Map(builtInSpeechProfiles.map((p) => [p.spec.name, p]));

export const builtInSpeechProfileById = (id: string): BuiltInSpeechProfile | undefined => byId.get(id.toLowerCase());
export const builtInSpeechProfileByName = (name: string): BuiltInSpeechProfile | undefined => byName.get(name);
