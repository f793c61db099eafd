import { isDeepStrictEqual } from 'node:util';
import { sql, type Kysely } from 'kysely';
import { z } from 'zod';
import { AppError, failedPrecondition, notFound } from '../../core/errors.js';
import type { ResourceDefinition, ResourceRepository, StoredResource } from '../../control-api/model/resources/resource-definition.js';
import type { Database } from '../../control-api/platform/store/schema.js';

/**
 * Two small test-only resource kinds (Widget, Gadget -> Widget by name) stored in a real table, so
 * the generic management machinery is exercised without depending on any real kind's rules.
 */

export const widgetSchema = z.object({
  name: z.string().min(1).max(50),
  colour: z.enum(['red', 'green', 'blue']),
  tags: z.array(z.string()).default([]),
  size: z.number().int().min(1).max(10).default(1),
  favourite: z.boolean().default(false),
  apiKey: z.string().min(1).optional(),
});
export type WidgetSpec = z.infer<typeof widgetSchema>;

export const gadgetSchema = z.object({
  name: z.string().min(1).max(50),
  widget: z.string().min(1),
});
export type GadgetSpec = z.infer<typeof gadgetSchema>;

type Db = Kysely<Database>;
// The test table is not part of `Database`; queries go through raw SQL.
interface Row {
  id: string;
  tenant_id: string;
  kind: string;
  key: string;
  spec: Record<string, unknown>;
  secret: string | null;
  created_at: Date;
  updated_at: Date;
}

export async function createWidgetTable(db: Db): Promise<void> {
  await sql`create table if not exists test_things (
    id uuid primary key default gen_random_uuid(), tenant_id uuid not null references tenants(id) on delete cascade,
    kind text not null, key text not null, spec jsonb not null, secret text,
    created_at timestamptz not null default now(), updated_at timestamptz not null default now(), unique (tenant_id, kind, key))`.execute(db);
}

function repository<Spec extends { name: string }>(kind: string, secretField?: keyof Spec, usedBy?: (db: Db, tenantId: string, key: string) => Promise<string[]>): ResourceRepository<Spec> {
  const toStored = (row: Row): StoredResource<Spec> => ({
    id: row.id,
    tenantId: row.tenant_id,
    spec: { ...(row.spec as Spec), ...(secretField && row.secret ? { [secretField]: '********' } : {}) },
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  });
  const split = (spec: Spec): { stored: Record<string, unknown>; secret: string | undefined } => {
    const { ...copy } = spec as Record<string, unknown>;
    const secret = secretField ? (copy[secretField as string] as string | undefined) : undefined;
    if (secretField) delete copy[secretField as string];
    return { stored: copy, secret: secret === '********' ? undefined : secret };
  };
  const select = async (db: Db, tenantId: string, where: ReturnType<typeof sql>): Promise<Row | undefined> =>
    (await sql<Row>`select * from test_things where tenant_id = ${tenantId} and kind = ${kind} and ${where}`.execute(db)).rows[0];
  return {
    async list(db, tenantId, page) {
      const after = page.cursor ? Buffer.from(page.cursor, 'base64url').toString('utf8') : '';
      const rows = (await sql<Row>`select * from test_things where tenant_id = ${tenantId} and kind = ${kind} and key > ${after} order by key limit ${page.limit + 1}`.execute(db)).rows;
      const items = rows.slice(0, page.limit).map(toStored);
      const last = rows[page.limit - 1];
      return { items, ...(rows.length > page.limit && last ? { nextCursor: Buffer.from(last.key).toString('base64url') } : {}) };
    },
    async get(db, tenantId, id) {
      const row = await select(db, tenantId, sql`id = ${id}`);
      return row ? toStored(row) : undefined;
    },
    async findByNaturalKey(db, tenantId, key) {
      const row = await select(db, tenantId, sql`key = ${key}`);
      return row ? toStored(row) : undefined;
    },
    async create(db, tenantId, spec) {
      if (await select(db, tenantId, sql`key = ${spec.name}`)) throw new AppError('already_exists', `${kind} "${spec.name}" already exists`);
      await checkRefs(db, tenantId, spec);
      const { stored, secret } = split(spec);
      const row = (await sql<Row>`insert into test_things (tenant_id, kind, key, spec, secret) values (${tenantId}, ${kind}, ${spec.name}, ${JSON.stringify(stored)}::jsonb, ${secret ?? null}) returning *`.execute(db)).rows[0]!;
      return toStored(row);
    },
    async update(db, tenantId, id, spec) {
      const current = await select(db, tenantId, sql`id = ${id}`);
      if (!current) throw notFound(`${kind} "${id}"`);
      await checkRefs(db, tenantId, spec);
      const { stored, secret } = split(spec);
      const row = (await sql<Row>`update test_things set key = ${spec.name}, spec = ${JSON.stringify(stored)}::jsonb, secret = coalesce(${secret ?? null}, secret), updated_at = now() where id = ${id} returning *`.execute(db)).rows[0]!;
      return toStored(row);
    },
    async delete(db, tenantId, id) {
      const current = await select(db, tenantId, sql`id = ${id}`);
      if (!current) throw notFound(`${kind} "${id}"`);
      const users = usedBy ? await usedBy(db, tenantId, current.key) : [];
      if (users.length > 0) throw failedPrecondition(`${kind} "${current.key}" is used by ${users.join(', ')}: change or delete those first`);
      await sql`delete from test_things where id = ${id}`.execute(db);
    },
    async isUnchanged(db, stored, spec) {
      const { stored: plain, secret } = split(spec);
      const current = (await sql<Row>`select * from test_things where id = ${stored.id}`.execute(db)).rows[0];
      if (!current) return false;
      return isDeepStrictEqual(current.spec, JSON.parse(JSON.stringify(plain))) && (secret === undefined || secret === current.secret);
    },
  };

  async function checkRefs(db: Db, tenantId: string, spec: Spec): Promise<void> {
    const ref = (spec as { widget?: string }).widget;
    if (kind === 'Gadget' && ref !== undefined) {
      const found = (await sql<Row>`select * from test_things where tenant_id = ${tenantId} and kind = 'Widget' and key = ${ref}`.execute(db)).rows[0];
      if (!found) throw new AppError('invalid_argument', `Widget "${ref}" not found`, { issues: [{ path: 'widget', message: `Widget "${ref}" not found` }] });
    }
  }
}

const gadgetsUsing = async (db: Db, tenantId: string, key: string): Promise<string[]> =>
  (await sql<Row>`select * from test_things where tenant_id = ${tenantId} and kind = 'Gadget' and spec->>'widget' = ${key} order by key`.execute(db)).rows.map((r) => `Gadget "${r.key}"`);

export const widgetDefinition: ResourceDefinition<WidgetSpec> = {
  kind: 'Widget',
  plural: 'widgets',
  schema: widgetSchema,
  naturalKey: (spec) => spec.name,
  repository: repository<WidgetSpec>('Widget', 'apiKey', gadgetsUsing),
};

export const gadgetDefinition: ResourceDefinition<GadgetSpec> = {
  kind: 'Gadget',
  plural: 'gadgets',
  schema: gadgetSchema,
  naturalKey: (spec) => spec.name,
  repository: repository<GadgetSpec>('Gadget'),
};

export const testDefinitions = [widgetDefinition, gadgetDefinition] as readonly ResourceDefinition[];
