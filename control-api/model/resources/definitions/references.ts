import { sql, type Kysely } from 'kysely';
import { invalidArgument } from '../../../../core/errors.js';
import { builtInSpeechProfileByName } from '../../domain/builtin-speech-profiles.js';
import type { Database } from '../../../platform/store/schema.js';
import type { ResourceTable } from './json-resource-repository.js';

/** Id of the resource of `table` with natural key `key` in the tenant, if any. */
export async function idOf(db: Kysely<Database>, table: ResourceTable, keyColumn: string, tenantId: string, key: string): Promise<string | undefined> {
  const result = await sql<{ id: string }>`select id from ${sql.table(table)} where tenant_id = ${tenantId} and ${sql.ref(keyColumn)} = ${key}`.execute(db);
  return result.rows[0]?.id;
}

/** Like `idOf`, but a missing target is the caller's mistake: `invalid_argument` on `path`. */
export async function requireRef(
  db: Kysely<Database>,
  target: { table: ResourceTable; keyColumn: string; noun: string },
  tenantId: string,
  key: string,
  path: string,
): Promise<string> {
  const id = await idOf(db, target.table, target.keyColumn, tenantId, key);
  if (!id) {
    const message = `${path} refers to ${target.noun} '${key}', which does not exist`;
    throw invalidArgument(message, [{ path, message }]);
  }
  return id;
}

/** Natural keys of `table` rows matching a condition, for "used by" messages. */
export async function namesWhere(
  db: Kysely<Database>,
  table: ResourceTable,
  keyColumn: string,
  tenantId: string,
  condition: ReturnType<typeof sql>,
): Promise<string[]> {
  const result = await sql<{ key: string }>`select ${sql.ref(keyColumn)} as key from ${sql.table(table)}
    where tenant_id = ${tenantId} and ${condition} order by 1 limit 20`.execute(db);
  return result.rows.map((r) => r.key);
}

/** A kind's names: API kind and path, table, natural key column, and the noun messages use. */
export interface KindIdentity {
  readonly kind: string;
  readonly plural: string;
  readonly table: ResourceTable;
  readonly keyColumn: string;
  readonly noun: string;
}

/** Each kind's identity: what a reference to it names, and where its definition stores it. */
export const targets = {
  recipe: { kind: 'Recipe', plural: 'recipes', table: 'recipes', keyColumn: 'name', noun: 'recipe' },
  sipTrunk: { kind: 'SipTrunk', plural: 'sip-trunks', table: 'sip_trunks', keyColumn: 'name', noun: 'SIP trunk' },
  speechProfile: { kind: 'SpeechProfile', plural: 'speech-profiles', table: 'speech_profiles', keyColumn: 'name', noun: 'speech profile' },
  pronunciationEntry: { kind: 'PronunciationEntry', plural: 'pronunciation-entries', table: 'pronunciation_entries', keyColumn: 'word', noun: 'pronunciation entry' },
  authProfile: { kind: 'AuthProfile', plural: 'auth-profiles', table: 'auth_profiles', keyColumn: 'name', noun: 'auth profile' },
  businessHours: { kind: 'BusinessHours', plural: 'business-hours', table: 'business_hours_profiles', keyColumn: 'name', noun: 'business-hours profile' },
  phoneNumber: { kind: 'PhoneNumber', plural: 'phone-numbers', table: 'phone_numbers', keyColumn: 'e164', noun: 'phone number' },
  campaign: { kind: 'Campaign', plural: 'campaigns', table: 'campaigns', keyColumn: 'name', noun: 'campaign' },
  knowledgeDocument: { kind: 'KnowledgeDocument', plural: 'knowledge-documents', table: 'knowledge_documents', keyColumn: 'name', noun: 'knowledge document' },
} as const satisfies Record<string, KindIdentity>;

/** `requireRef` for a speech profile: a built-in profile's name is as good as a custom one's. */
export async function requireSpeechProfile(db: Kysely<Database>, tenantId: string, name: string, path: string): Promise<void> {
  if (builtInSpeechProfileByName(name)) return;
  await requireRef(db, targets.speechProfile, tenantId, name, path);
}
