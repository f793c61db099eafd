import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { Kysely, Selectable } from 'kysely';
import { alreadyExists, invalidArgument, notFound } from '../../../core/errors.js';
import type { SecretBox } from '../../platform/crypto/secret-box.js';
import { maskSecrets, missingSecrets, openSecrets, sealSecrets, secretsUnchanged, withoutSecrets } from '../../platform/crypto/secret-fields.js';
import { speechSecretPaths } from '../domain/tenant-speech.js';
import { tenantSchema, tenantUpdateSchema, type TenantSettings, type TenantSpec, type TenantUpdate } from '../domain/tenant.js';
import { parseOrThrow } from '../../platform/validation.js';
import type { TenantAdmin } from './tenant-admin.js';
import type { Page, PageResult, StoredResource } from '../resources/resource-definition.js';
import type { Database, TenantsTable } from '../../platform/store/schema.js';

/**
 * Tenants are operator-level (not inside a tenant): create, read by id or client ID, list,
 * update, delete. Deleting a tenant removes everything it owns (foreign keys cascade).
 */
const settingsSecretPaths = ['settings.webhookSecret', 'settings.llm.apiKey', ...speechSecretPaths] as const;
const secretKind = 'Tenant';

type Row = Selectable<TenantsTable>;

export interface TenantsRepository extends TenantAdmin {
  get(db: Kysely<Database>, id: string): Promise<StoredResource<TenantSpec> | undefined>;
  /** Settings with the webhook secret and the LLM and speech keys in clear, for the clients that use them. Never serve them. */
  settingsWithSecrets(db: Kysely<Database>, id: string): Promise<TenantSpec['settings'] | undefined>;
}

/** A speech provider block needs its key: given now, or kept from the stored settings. */
function refuseMissingKeys(sealed: TenantSpec | TenantUpdate): void {
  const missing = missingSecrets(sealed, speechSecretPaths);
  if (missing.length > 0) {
    throw invalidArgument(`invalid tenant: ${missing[0]} is required`, missing.map((path) => ({ path, message: `${path} is required` })));
  }
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function createTenantsRepository(box: SecretBox): TenantsRepository {
  const specOf = (row: Row): TenantSpec => ({
    clientId: row.client_id,
    name: row.name,
    timezone: row.timezone,
    // Stored settings were validated on write; the sealed secret would not pass the clear-text bounds.
    settings: { ssrfAllowlist: [], ...(row.settings as Partial<TenantSettings> | null) },
  });
  const stored = (row: Row): StoredResource<TenantSpec> => ({
    id: row.id,
    tenantId: row.id,
    spec: maskSecrets(specOf(row), settingsSecretPaths),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  });
  const options = (tenantId: string) => ({ box, tenantId, kind: secretKind, paths: settingsSecretPaths });
  const byId = async (db: Kysely<Database>, id: string) =>
    uuidPattern.test(id) ? db.selectFrom('tenants').selectAll().where('id', '=', id).executeTakeFirst() : undefined;

  return {
    async list(db, page: Page): Promise<PageResult<StoredResource<TenantSpec>>> {
      const limit = Math.min(Math.max(Math.trunc(page.limit) || 50, 1), 200);
      let query = db.selectFrom('tenants').selectAll().orderBy('client_id').limit(limit + 1);
      if (page.cursor) {
        const after = Buffer.from(page.cursor, 'base64url').toString('utf8');
        if (!after) throw invalidArgument('cursor is not a cursor returned by this list');
        query = query.where('client_id', '>', after);
      }
      const rows = await query.execute();
      const items = rows.slice(0, limit);
      const last = items[items.length - 1];
      return {
        items: items.map(stored),
        ...(rows.length > limit && last ? { nextCursor: Buffer.from(last.client_id, 'utf8').toString('base64url') } : {}),
      };
    },

    async get(db, id) {
      const row = await byId(db, id);
      return row ? stored(row) : undefined;
    },

    async findByClientId(db, clientId) {
      const row = await db.selectFrom('tenants').selectAll().where('client_id', '=', clientId).executeTakeFirst();
      return row ? stored(row) : undefined;
    },

    async settingsWithSecrets(db, id) {
      const row = await byId(db, id);
      if (!row) return undefined;
      return openSecrets(specOf(row), options(id)).settings;
    },

    async create(db, input) {
      const spec = parseOrThrow(tenantSchema, input, 'tenant');
      // The id is the secret's encryption context, so it is chosen here; one insert, no
      // transaction of our own (apply runs every write inside its transaction).
      const id = randomUUID();
      const sealed = sealSecrets(spec, undefined, options(id));
      refuseMissingKeys(sealed);
      try {
        const row = await db
          .insertInto('tenants')
          .values({ id, client_id: spec.clientId, name: spec.name, timezone: spec.timezone, settings: JSON.stringify(sealed.settings) })
          .returningAll()
          .executeTakeFirstOrThrow();
        return stored(row);
      } catch (error) {
        if ((error as { code?: string }).code === '23505') throw alreadyExists(`tenant '${spec.clientId}' already exists`);
        throw error;
      }
    },

    async update(db, id, input: TenantUpdate, clear: readonly string[] = []) {
      const spec = parseOrThrow(tenantUpdateSchema, input, 'tenant');
      const previous = await byId(db, id);
      if (!previous) throw notFound(`tenant ${id}`);
      // A secret a patch set to null is not carried over: that is how a key is removed.
      const cleared = settingsSecretPaths.filter((p) => clear.some((c) => p === c || p.startsWith(`${c}.`)));
      const sealed = sealSecrets(spec, withoutSecrets({ settings: previous.settings }, cleared), options(id));
      refuseMissingKeys(sealed);
      const row = await db
        .updateTable('tenants')
        .set({ name: spec.name, timezone: spec.timezone, settings: JSON.stringify(sealed.settings), updated_at: new Date() })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst();
      if (!row) throw notFound(`tenant ${id}`);
      return stored(row);
    },

    async delete(db, id) {
      const result = uuidPattern.test(id) ? await db.deleteFrom('tenants').where('id', '=', id).executeTakeFirst() : undefined;
      if (!result || result.numDeletedRows === 0n) throw notFound(`tenant ${id}`);
    },

    async isUnchanged(db, current, input) {
      const row = await byId(db, current.id);
      if (!row) return false;
      const parsed = tenantSchema.safeParse(input);
      if (!parsed.success) return false;
      const before = specOf(row);
      if (!secretsUnchanged(before, parsed.data, options(row.id))) return false;
      const strip = (s: TenantSpec) => JSON.parse(JSON.stringify(withoutSecrets(s, settingsSecretPaths))) as unknown;
      return isDeepStrictEqual(strip(before), strip(parsed.data));
    },
  };
}
