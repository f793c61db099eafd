import { sql } from 'kysely';
import type { SecretBox } from '../../../platform/crypto/secret-box.js';
import { AppError } from '../../../../core/errors.js';
import { builtInSpeechProfileByName } from '../../domain/builtin-speech-profiles.js';
import { genders, matchesSpeechProfileFilter, speechProfileFilterSchema, speechProfileSchema, ttsProviders, type SpeechProfileSpec } from '../../domain/speech-profile.js';
import type { ListFilter } from '../resource-definition.js';
import { defineKind } from './define-kind.js';
import { namesWhere, targets } from './references.js';
import { withBuiltInSpeechProfiles } from './speech-profile-catalogue.js';

// Schema messages already name the parameter ("gender filter must be ..."); short ones do not ("must be one of ...").
const badParameter = (name: string, message: string): AppError =>
  new AppError('invalid_argument', message.startsWith(name) ? message : `${name} ${message}`, { issues: [{ path: name, message }] });

/**
 * The dashboard's voice filters (spec: Gender Male/Female/All, Language and Accent, Skills tags,
 * favourites) with the domain's semantics: `language=en` finds `en-IN`, `gender=all` is no filter.
 */
export const speechProfileListFilter: ListFilter<SpeechProfileSpec> = {
  parameters: {
    gender: { type: 'string', enum: [...genders, 'all'], description: "male, female or all (default all)" },
    language: { type: 'string', description: 'a language tag; a primary subtag matches every accent (`en` finds `en-IN`), case-insensitive' },
    tags: { type: 'list', description: 'skills tags the profile must all carry (repeat for several), case-insensitive' },
    favourite: { type: 'boolean', description: 'true: favourites only; false: only profiles not marked favourite' },
    provider: { type: 'string', enum: [...ttsProviders], description: 'text-to-speech provider' },
    builtIn: { type: 'boolean', description: "true: only the platform's built-in profiles; false: only the tenant's custom ones" },
  },
  compile(values) {
    const one = (name: string): string | undefined => {
      const v = values.get(name);
      if (v && v.length > 1) throw badParameter(name, 'may be given once');
      return v?.[0];
    };
    const parsed = speechProfileFilterSchema.safeParse({
      gender: one('gender')?.toLowerCase(),
      language: one('language'),
      tags: values.get('tags') ?? [],
      favouritesOnly: one('favourite') === 'true',
    });
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const name = String(issue?.path[0] ?? 'query');
      throw badParameter(name === 'favouritesOnly' ? 'favourite' : name, issue?.message ?? 'is invalid');
    }
    const filter = parsed.data;
    const notFavourite = one('favourite') === 'false';
    const provider = one('provider')?.toLowerCase();
    if (provider !== undefined && !(ttsProviders as readonly string[]).includes(provider)) throw badParameter('provider', `must be one of ${ttsProviders.join(', ')}`);
    const builtIn = one('builtIn');
    // A custom profile cannot take a built-in's name, so the name tells them apart.
    const origin = (spec: SpeechProfileSpec): boolean => builtIn === undefined || (builtInSpeechProfileByName(spec.name) !== undefined) === (builtIn === 'true');
    return (spec) =>
      matchesSpeechProfileFilter(spec, filter) && !(notFavourite && spec.favourite) && (provider === undefined || spec.provider === provider) && origin(spec);
  },
};

export function speechProfileDefinition(box: SecretBox) {
  const definition = defineKind<SpeechProfileSpec>(targets.speechProfile, box, {
    schema: speechProfileSchema,
    naturalKey: (spec) => spec.name,
    async columns(_db, _tenantId, spec) {
      return { language: spec.language, gender: spec.gender, favourite: spec.favourite };
    },
    async usedBy(db, tenantId, _id, name) {
      const numbers = await namesWhere(db, 'phone_numbers', 'e164', tenantId, sql`spec->>'voice' = ${name}`);
      const words = await namesWhere(db, 'pronunciation_entries', 'word', tenantId, sql`spec->'speechProfiles' @> jsonb_build_array(${name}::text)`);
      return [...numbers.map((n) => `phone number ${n}`), ...words.map((w) => `pronunciation entry '${w}'`)];
    },
  });
  return { ...definition, repository: withBuiltInSpeechProfiles(definition.repository), listFilter: speechProfileListFilter, hasBuiltIns: true };
}
