import type { Kysely } from 'kysely';
import type { ActiveCall } from '../../../core/ports/call-handler.js';
import type { PronunciationRule } from '../../../media/speech/pronunciation.js';
import type { SpeechProfileSpec } from '../../model/domain/speech-profile.js';
import type { Recipe } from '../../model/recipes/recipe-schema.js';
import { findNumberByE164, findPronunciationEntries, findRecipeById, findSpeechProfileByName, findTenantProfile } from '../../model/resources/definitions/lookups.js';
import { offlineSpeech, type TenantCallSpeech } from '../../model/tenants/tenant-speech.js';
import type { Database } from '../../platform/store/schema.js';

/** What a call needs from the store before the agent speaks. */
export interface CallSetup {
  readonly recipe: Recipe;
  readonly language: string;
  readonly keywords: readonly string[];
  readonly profile?: { readonly name: string; readonly spec: SpeechProfileSpec };
  readonly rules: readonly PronunciationRule[];
  readonly timezone: string;
  readonly tenantName?: string;
  readonly speech: TenantCallSpeech;
}

/**
 * Loads a call's setup through the model floor's lookups: the recipe, our number's speech settings
 * (language, boosted keywords, speech profile, pronunciation words), the tenant's name and time
 * zone and its speech providers. `ours` is our end of the call (the dialled number inbound, the
 * caller ID of a campaign call). Undefined when the recipe is gone.
 */
export async function loadCallSetup(
  db: Kysely<Database>,
  info: ActiveCall['info'],
  ours: string,
  tenantSpeech: ((tenantId: string) => Promise<TenantCallSpeech>) | undefined,
): Promise<CallSetup | undefined> {
  const [recipe, number, tenant, speech] = await Promise.all([
    findRecipeById(db, info.tenantId, info.recipeId),
    findNumberByE164(db, ours, info.tenantId),
    findTenantProfile(db, info.tenantId),
    tenantSpeech ? tenantSpeech(info.tenantId) : offlineSpeech,
  ]);
  if (!recipe) return undefined;
  const spec = number?.spec;
  // A built-in profile is not a row: resolve through the catalogue as well as the table.
  const [profile, entries] = await Promise.all([
    spec?.voice ? findSpeechProfileByName(db, info.tenantId, spec.voice) : undefined,
    findPronunciationEntries(db, info.tenantId, spec?.pronunciationWords ?? []),
  ]);
  return {
    recipe,
    language: spec?.language ?? info.language,
    keywords: spec?.boostedKeywords ?? [],
    ...(profile ? { profile } : {}),
    rules: entries.map((e) => ({ word: e.word, pronunciation: e.pronunciation, caseSensitive: e.caseSensitive, speechProfiles: e.speechProfiles })),
    timezone: tenant?.timezone ?? 'UTC',
    ...(tenant?.name ? { tenantName: tenant.name } : {}),
    speech,
  };
}
