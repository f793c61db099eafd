import { isDeepStrictEqual } from 'node:util';
import type { Kysely } from 'kysely';
import { AppError, notFound } from '../../core/errors.js';
import type { TenantSpec } from '../../control-api/domain/tenant.js';
import type { TenantAdmin } from '../../control-api/management/tenant-admin.js';
import type { StoredResource } from '../../control-api/resources/resource-definition.js';
import type { Database } from '../../control-api/store/schema.js';

type Row = { id: string; client_id: string; name: string; timezone: string; settings: unknown; created_at: Date; updated_at: Date };

const toStored = (row: Row): StoredResource<TenantSpec> => ({
  id: row.id,
  tenantId: row.id,
  spec: { clientId: row.client_id, name: row.name, timezone: row.timezone, settings: (row.settings ?? { ssrfAllowlist: [] }) as TenantSpec['settings'] },
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/** Minimal tenant persistence over the `tenants` table for tests of the generic machinery. */
export const tableTenantAdmin: TenantAdmin = {
  async list(db, page) {
    let q = db.selectFrom('tenants').selectAll().orderBy('client_id').limit(page.limit + 1);
    if (page.cursor) q = q.where('client_id', '>', Buffer.from(page.cursor, 'base64url').toString());
    const rows = (await q.execute()) as Row[];
    const last = rows[page.limit - 1];
    return { items: rows.slice(0, page.limit).map(toStored), ...(rows.length > page.limit && last ? { nextCursor: Buffer.from(last.client_id).toString('base64url') } : {}) };
  },
  async findByClientId(db, clientId) {
    const row = (await db.selectFrom('tenants').selectAll().where('client_id', '=', clientId).executeTakeFirst()) as Row | undefined;
    return row ? toStored(row) : undefined;
  },
  async create(db, spec) {
    if (await this.findByClientId(db, spec.clientId)) throw new AppError('already_exists', `tenant "${spec.clientId}" already exists`);
    const row = await insert(db, spec);
    return toStored(row);
  },
  async update(db, id, spec) {
    const row = (await db
      .updateTable('tenants')
      .set({ name: spec.name, timezone: spec.timezone, settings: JSON.stringify(spec.settings), updated_at: new Date() })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst()) as Row | undefined;
    if (!row) throw notFound(`tenant ${id}`);
    return toStored(row);
  },
  async delete(db, id) {
    await db.deleteFrom('tenants').where('id', '=', id).execute();
  },
  async isUnchanged(_db, stored, spec) {
    return stored.spec.name === spec.name && stored.spec.timezone === spec.timezone && isDeepStrictEqual(stored.spec.settings, JSON.parse(JSON.stringify(spec.settings)));
  },
};

async function insert(db: Kysely<Database>, spec: TenantSpec): Promise<Row> {
  return (await db
    .insertInto('tenants')
    .values({ client_id: spec.clientId, name: spec.name, timezone: spec.timezone, settings: JSON.stringify(spec.settings) })
    .returningAll()
    .executeTakeFirstOrThrow()) as Row;
}
