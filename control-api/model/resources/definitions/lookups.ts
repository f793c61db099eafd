import { sql, type Kysely } from 'kysely';
import { maskSecrets } from '../../../platform/crypto/secret-fields.js';
import type { CampaignSpec } from '../../domain/campaign.js';
import { builtInSpeechProfileByName, builtInSpeechProfiles } from '../../domain/builtin-speech-profiles.js';
import { normaliseE164 } from '../../domain/common.js';
import { phoneNumberSecretPaths, type PhoneNumberSpec } from '../../domain/phone-number.js';
import type { PronunciationEntrySpec } from '../../domain/pronunciation-entry.js';
import { sipTrunkSecretPaths, type SipTrunkSpec } from '../../domain/sip-trunk.js';
import {
  matchesSpeechProfileFilter,
  speechProfileFilterSchema,
  type SpeechProfileFilter,
  type SpeechProfileSpec,
} from '../../domain/speech-profile.js';
import type { Recipe } from '../../recipes/recipe-schema.js';
import type { Database } from '../../../platform/store/schema.js';

/**
 * Read paths the gateway (inbound routing) and the scheduler (outbound campaigns) run per call.
 * They hit real indexed columns, never jsonb, and return specs with secrets masked; a component
 * that needs a secret asks the kind's repository `findWithSecrets`.
 */

export interface NumberRoute {
  readonly id: string;
  readonly tenantId: string;
  readonly e164: string;
  readonly enabled: boolean;
  readonly provider: PhoneNumberSpec['provider']['type'];
  readonly recipeId: string;
  readonly sipTrunkId: string | null;
  readonly spec: PhoneNumberSpec;
}

/** The number a call is for; any formatting of the number is accepted. Tenant optional (inbound calls do not know it yet). */
export async function findNumberByE164(db: Kysely<Database>, number: string, tenantId?: string): Promise<NumberRoute | undefined> {
  const e164 = normaliseE164(number);
  if (!e164) return undefined;
  let query = db.selectFrom('phone_numbers').selectAll().where('e164', '=', e164);
  if (tenantId) query = query.where('tenant_id', '=', tenantId);
  const row = await query.executeTakeFirst();
  if (!row) return undefined;
  return {
    id: row.id,
    tenantId: row.tenant_id,
    e164: row.e164,
    enabled: row.enabled,
    provider: row.provider as NumberRoute['provider'],
    recipeId: row.recipe_id,
    sipTrunkId: row.sip_trunk_id,
    spec: maskSecrets(row.spec as PhoneNumberSpec, phoneNumberSecretPaths),
  };
}

/** A number as stored, its provider secrets still sealed: for the one part that opens them (cloud provider calls). */
export interface SealedNumber {
  readonly id: string;
  readonly tenantId: string;
  readonly e164: string;
  readonly enabled: boolean;
  /** `nativeStack`, `customSipTrunk`, `providerA` ... */
  readonly provider: string;
  readonly recipeId: string;
  readonly spec: PhoneNumberSpec;
}

/** Numbers read per call (an edited number applies to the next call, no restart). */
export interface SealedNumbers {
  /** Any formatting of the number is accepted; any tenant (inbound calls do not know it yet). */
  byE164(number: string): Promise<SealedNumber | undefined>;
  byId(id: string): Promise<SealedNumber | undefined>;
}

export function sealedNumbers(db: Kysely<Database>): SealedNumbers {
  const read = async (where: { e164: string } | { id: string }): Promise<SealedNumber | undefined> => {
    const query = db.selectFrom('phone_numbers').select(['id', 'tenant_id', 'e164', 'enabled', 'recipe_id', 'provider', 'spec']);
    const row = await ('e164' in where ? query.where('e164', '=', where.e164) : query.where('id', '=', where.id)).executeTakeFirst();
    return row && { id: row.id, tenantId: row.tenant_id, e164: row.e164, enabled: row.enabled, provider: row.provider, recipeId: row.recipe_id, spec: row.spec as PhoneNumberSpec };
  };
  return {
    byE164: async (number) => {
      const e164 = normaliseE164(number);
      return e164 ? read({ e164 }) : undefined;
    },
    byId: (id) => read({ id }),
  };
}

export interface TrunkRoute {
  readonly id: string;
  readonly tenantId: string;
  readonly name: string;
  readonly terminationAddresses: readonly string[];
  readonly dids: readonly string[];
  readonly extension: string | null;
  readonly spec: SipTrunkSpec;
}

const trunkColumns = ['id', 'tenant_id', 'name', 'termination_addresses', 'dids', 'extension', 'spec'] as const;

type TrunkRow = { id: string; tenant_id: string; name: string; termination_addresses: string[]; dids: string[]; extension: string | null; spec: unknown };

const toTrunk = (row: TrunkRow): TrunkRoute => ({
  id: row.id,
  tenantId: row.tenant_id,
  name: row.name,
  terminationAddresses: row.termination_addresses,
  dids: row.dids,
  extension: row.extension,
  spec: maskSecrets(row.spec as SipTrunkSpec, sipTrunkSecretPaths),
});

/**
 * Trunks whose termination addresses include `address` (an IP or FQDN, matched case-insensitively).
 * Several tenants may share one carrier gateway, so this is a list: the DID or the extension then
 * picks the tenant.
 */
export async function findTrunksBySource(db: Kysely<Database>, address: string): Promise<TrunkRoute[]> {
  const rows = await db
    .selectFrom('sip_trunks')
    .select(trunkColumns)
    .where(sql<boolean>`termination_addresses @> array[${address.toLowerCase()}]::text[]`)
    .orderBy('created_at')
    .execute();
  return rows.map(toTrunk);
}

/** The trunk whose extension number is `extension` (fallback tenant identifier, spec: custom SIP). */
export async function findTrunkByExtension(db: Kysely<Database>, extension: string): Promise<TrunkRoute | undefined> {
  const row = await db.selectFrom('sip_trunks').select(trunkColumns).where('extension', '=', extension).executeTakeFirst();
  return row ? toTrunk(row) : undefined;
}

/** Trunks that declare `number` among their DIDs. */
export async function findTrunksByDid(db: Kysely<Database>, number: string): Promise<TrunkRoute[]> {
  const e164 = normaliseE164(number);
  if (!e164) return [];
  const rows = await db
    .selectFrom('sip_trunks')
    .select(trunkColumns)
    .where(sql<boolean>`dids @> array[${e164}]::text[]`)
    .execute();
  return rows.map(toTrunk);
}

export interface CampaignRecord {
  readonly id: string;
  readonly tenantId: string;
  readonly name: string;
  readonly published: boolean;
  readonly recipeId: string;
  readonly phoneNumberId: string;
  readonly spec: CampaignSpec;
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The campaign a SendMessage names (CampaignID is the campaign's id), within the caller's tenant. */
export async function findCampaignForTenant(db: Kysely<Database>, tenantId: string, campaignId: string): Promise<CampaignRecord | undefined> {
  if (!uuidPattern.test(campaignId)) return undefined;
  const row = await db
    .selectFrom('campaigns')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', campaignId)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    id: row.id,
    tenantId: row.tenant_id,
    name: row.name,
    published: row.published,
    recipeId: row.recipe_id,
    phoneNumberId: row.phone_number_id,
    spec: row.spec as CampaignSpec,
  };
}

/** A recipe by id (what numbers and campaigns point at), for the runtime. */
export async function findRecipeById(db: Kysely<Database>, tenantId: string, recipeId: string): Promise<Recipe | undefined> {
  if (!uuidPattern.test(recipeId)) return undefined;
  const row = await db.selectFrom('recipes').select('spec').where('tenant_id', '=', tenantId).where('id', '=', recipeId).executeTakeFirst();
  return row ? (row.spec as Recipe) : undefined;
}

/**
 * The speech profile a number's `voice` names, for the call: a built-in profile (the platform's
 * catalogue, never in the table) or the tenant's custom one. Undefined when neither exists.
 */
export async function findSpeechProfileByName(db: Kysely<Database>, tenantId: string, name: string): Promise<{ name: string; spec: SpeechProfileSpec } | undefined> {
  const builtIn = builtInSpeechProfileByName(name);
  if (builtIn) return { name, spec: builtIn.spec };
  const row = await db.selectFrom('speech_profiles').select(['name', 'spec']).where('tenant_id', '=', tenantId).where('name', '=', name).executeTakeFirst();
  return row ? { name: row.name, spec: row.spec as SpeechProfileSpec } : undefined;
}

/** The tenant's pronunciation entries for these words (a number's `pronunciationWords`). */
export async function findPronunciationEntries(db: Kysely<Database>, tenantId: string, words: readonly string[]): Promise<PronunciationEntrySpec[]> {
  if (words.length === 0) return [];
  const rows = await db.selectFrom('pronunciation_entries').select('spec').where('tenant_id', '=', tenantId).where('word', 'in', words).execute();
  return rows.map((r) => r.spec as PronunciationEntrySpec);
}

/** The name and time zone a call of the tenant is run with (undefined: no such tenant). */
export async function findTenantProfile(db: Kysely<Database>, tenantId: string): Promise<{ name: string; timezone: string } | undefined> {
  return db.selectFrom('tenants').select(['name', 'timezone']).where('id', '=', tenantId).executeTakeFirst();
}

/**
 * The Speech Profiles page's filters (Gender, Language and Accent, Skills tags, favourites) over
 * the built-in catalogue (first, with this tenant's stars) and the tenant's custom profiles.
 * For the custom ones gender, favourite and language narrow in SQL on their columns; tags,
 * compared case-insensitively, are checked on the spec.
 */
export async function searchSpeechProfiles(
  db: Kysely<Database>,
  tenantId: string,
  filter: SpeechProfileFilter,
): Promise<Array<{ id: string; spec: SpeechProfileSpec; builtIn: boolean }>> {
  const f = speechProfileFilterSchema.parse(filter);
  let query = db.selectFrom('speech_profiles').select(['id', 'spec']).where('tenant_id', '=', tenantId).orderBy('name');
  if (f.gender !== 'all') query = query.where('gender', '=', f.gender);
  if (f.favouritesOnly) query = query.where('favourite', '=', true);
  if (f.language) {
    const language = f.language.toLowerCase();
    query = query.where((eb) => eb.or([eb(eb.fn('lower', ['language']), '=', language), eb(eb.fn('lower', ['language']), 'like', `${language.replace(/[%_\\]/g, '')}-%`)]));
  }
  const [rows, stars] = await Promise.all([
    query.execute(),
    db.selectFrom('speech_profile_favourites').select('profile_id').where('tenant_id', '=', tenantId).execute(),
  ]);
  const starred = new Set(stars.map((r) => r.profile_id.toLowerCase()));
  const builtIns = builtInSpeechProfiles.map((p) => ({ id: p.id, spec: { ...p.spec, favourite: starred.has(p.id) }, builtIn: true }));
  const custom = rows.map((row) => ({ id: row.id, spec: row.spec as SpeechProfileSpec, builtIn: false }));
  return [...builtIns, ...custom].filter((profile) => matchesSpeechProfileFilter(profile.spec, f));
}
