import { isDeepStrictEqual } from 'node:util';
import type { Kysely } from 'kysely';
import { AppError, alreadyExists, invalidArgument } from '../../../../core/errors.js';
import {
  builtInSpeechProfileById,
  builtInSpeechProfileByName,
  builtInSpeechProfiles,
  type BuiltInSpeechProfile,
} from '../../domain/builtin-speech-profiles.js';
import { speechProfileSchema, type SpeechProfileSpec } from '../../domain/speech-profile.js';
import { parseOrThrow } from '../../../platform/validation.js';
import type { Database } from '../../../platform/store/schema.js';
import type { PageResult, StoredResource } from '../resource-definition.js';
import type { JsonResourceRepository } from './json-resource-repository.js';

// The catalogue is code, not rows: its timestamps are those of the release that introduced it.
const catalogueDate = new Date('2026-11-21T00:00:00.000Z');

type Profile = StoredResource<SpeechProfileSpec>;

async function starredIds(db: Kysely<Database>, tenantId: string): Promise<Set<string>> {
  const rows = await db.selectFrom('speech_profile_favourites').select('profile_id').where('tenant_id', '=', tenantId).execute();
  return new Set(rows.map((r) => r.profile_id.toLowerCase()));
}

const asStored = (tenantId: string, profile: BuiltInSpeechProfile, favourite: boolean): Profile => ({
  id: profile.id,
  tenantId,
  spec: { ...profile.spec, favourite },
  createdAt: catalogueDate,
  updatedAt: catalogueDate,
  builtIn: true,
});

async function storedBuiltIn(db: Kysely<Database>, tenantId: string, profile: BuiltInSpeechProfile): Promise<Profile> {
  return asStored(tenantId, profile, (await starredIds(db, tenantId)).has(profile.id));
}

const custom = (stored: Profile | undefined): Profile | undefined => (stored ? { ...stored, builtIn: false } : undefined);

/** Page cursors inside the catalogue are `{"b": index}`; past it they are the table's own cursors. */
const catalogueCursor = (index: number): string => Buffer.from(JSON.stringify({ b: index }), 'utf8').toString('base64url');

function catalogueIndex(cursor: string): number | undefined {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return undefined; // not ours: the table's repository judges it
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !('b' in value)) return undefined;
  const index = (value as { b: unknown }).b;
  if (typeof index === 'number' && Number.isInteger(index) && index >= 0 && index <= builtInSpeechProfiles.length) return index;
  throw invalidArgument('cursor is not a cursor returned by this list', [{ path: 'cursor', message: 'unknown cursor' }]);
}

const refuse = (profile: BuiltInSpeechProfile, action: string, hint: string): AppError =>
  new AppError('permission_denied', `built-in speech profile '${profile.spec.name}' cannot be ${action}: ${hint}`);

function refuseBuiltInName(spec: SpeechProfileSpec): void {
  if (builtInSpeechProfileByName(spec.name)) {
    throw alreadyExists(`speech profile '${spec.name}' already exists as a built-in profile; choose another name`);
  }
}

/**
 * The speech-profile repository: the tenant's custom profiles (the jsonb table) behind the
 * built-in catalogue. Lists give the catalogue first (catalogue order), then the custom profiles
 * by name. A built-in is read like any profile, with the tenant's own star; a change to it is 403
 * `permission_denied`, except the star (`favourite`), which is stored per tenant. A custom
 * profile may not take a built-in's name, so a name always means one profile.
 */
export function withBuiltInSpeechProfiles(table: JsonResourceRepository<SpeechProfileSpec>): JsonResourceRepository<SpeechProfileSpec> {
  return {
    async list(db, tenantId, page): Promise<PageResult<Profile>> {
      const limit = Math.min(Math.max(Math.trunc(page.limit) || 50, 1), 200);
      const start = page.cursor === undefined ? 0 : catalogueIndex(page.cursor);
      if (start === undefined) {
        const rest = await table.list(db, tenantId, page);
        return { ...rest, items: rest.items.map((r) => ({ ...r, builtIn: false })) };
      }
      const slice = builtInSpeechProfiles.slice(start, start + limit);
      const stars = slice.length > 0 ? await starredIds(db, tenantId) : new Set<string>();
      const items = slice.map((p) => asStored(tenantId, p, stars.has(p.id)));
      const end = start + slice.length;
      if (end < builtInSpeechProfiles.length) return { items, nextCursor: catalogueCursor(end) };
      const room = limit - items.length;
      if (room === 0) {
        // The page ends exactly with the catalogue: point past it only when custom profiles follow.
        const peek = await table.list(db, tenantId, { limit: 1 });
        return { items, ...(peek.items.length > 0 ? { nextCursor: catalogueCursor(end) } : {}) };
      }
      const rest = await table.list(db, tenantId, { limit: room });
      return { items: [...items, ...rest.items.map((r) => ({ ...r, builtIn: false }))], ...(rest.nextCursor ? { nextCursor: rest.nextCursor } : {}) };
    },

    async get(db, tenantId, id) {
      const builtIn = builtInSpeechProfileById(id);
      return builtIn ? storedBuiltIn(db, tenantId, builtIn) : custom(await table.get(db, tenantId, id));
    },

    async findByNaturalKey(db, tenantId, name) {
      const builtIn = builtInSpeechProfileByName(name);
      return builtIn ? storedBuiltIn(db, tenantId, builtIn) : custom(await table.findByNaturalKey(db, tenantId, name));
    },

    async findWithSecrets(db, tenantId, name) {
      const builtIn = builtInSpeechProfileByName(name);
      return builtIn ? storedBuiltIn(db, tenantId, builtIn) : custom(await table.findWithSecrets(db, tenantId, name));
    },

    async create(db, tenantId, spec) {
      refuseBuiltInName(spec);
      return { ...(await table.create(db, tenantId, spec)), builtIn: false };
    },

    async update(db, tenantId, id, input) {
      const builtIn = builtInSpeechProfileById(id);
      if (!builtIn) {
        refuseBuiltInName(input);
        return { ...(await table.update(db, tenantId, id, input)), builtIn: false };
      }
      const spec = parseOrThrow(speechProfileSchema, input, 'speech profile');
      if (!isDeepStrictEqual({ ...spec, favourite: false }, builtIn.spec)) {
        throw refuse(builtIn, 'edited', 'only its favourite star can change (create a custom profile to use other settings)');
      }
      if (spec.favourite) {
        await db.insertInto('speech_profile_favourites').values({ tenant_id: tenantId, profile_id: builtIn.id }).onConflict((c) => c.doNothing()).execute();
      } else {
        await db.deleteFrom('speech_profile_favourites').where('tenant_id', '=', tenantId).where('profile_id', '=', builtIn.id).execute();
      }
      return asStored(tenantId, builtIn, spec.favourite);
    },

    async delete(db, tenantId, id) {
      const builtIn = builtInSpeechProfileById(id);
      if (builtIn) throw refuse(builtIn, 'deleted', 'it belongs to the platform catalogue');
      await table.delete(db, tenantId, id);
    },

    async isUnchanged(db, stored, input) {
      if (!stored.builtIn) return table.isUnchanged(db, stored, input);
      const parsed = speechProfileSchema.safeParse(input);
      return parsed.success && isDeepStrictEqual(parsed.data, stored.spec);
    },
  };
}
