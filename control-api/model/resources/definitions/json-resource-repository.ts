import { isDeepStrictEqual } from 'node:util';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { z } from 'zod';
import { AppError, alreadyExists, failedPrecondition, invalidArgument, notFound } from '../../../../core/errors.js';
import type { SecretBox } from '../../../platform/crypto/secret-box.js';
import { maskSecrets, missingSecrets, openSecrets, sealSecrets, secretsUnchanged, withoutSecrets } from '../../../platform/crypto/secret-fields.js';
import { parseOrThrow } from '../../../platform/validation.js';
import type { Database } from '../../../platform/store/schema.js';
import type { Page, PageResult, ResourceRepository, StoredResource } from '../resource-definition.js';

/**
 * One repository implementation for every tenant-scoped kind: a row holds the natural key and
 * a few queried columns as real columns and the validated spec as jsonb. Kinds differ only in
 * the config: which columns they derive (resolving references), who uses them, which fields
 * are secret. Queries are raw SQL on purpose: the table varies per kind and Kysely's typed
 * builder cannot express "any of these tables" without casts.
 */
export type ResourceTable =
  | 'recipes'
  | 'business_hours_profiles'
  | 'auth_profiles'
  | 'pronunciation_entries'
  | 'speech_profiles'
  | 'knowledge_documents'
  | 'sip_trunks'
  | 'phone_numbers'
  | 'campaigns';

/** A column value the repository writes beside the spec. Arrays go to text[] columns. */
export type ColumnValue = string | boolean | null | readonly string[];

export interface JsonResourceConfig<Spec> {
  readonly kind: string;
  /** Human name in messages: "recipe", "phone number". */
  readonly noun: string;
  readonly table: ResourceTable;
  readonly keyColumn: string;
  readonly schema: z.ZodType<Spec>;
  naturalKey(spec: Spec): string;
  /** Derived columns; resolves references and throws `invalid_argument` when one dangles. */
  columns?(db: Kysely<Database>, tenantId: string, spec: Spec): Promise<Record<string, ColumnValue>>;
  /** Who still references the stored resource, as readable names ("campaign 'Renewals'"). */
  usedBy?(db: Kysely<Database>, tenantId: string, id: string, key: string): Promise<string[]>;
  readonly secretPaths?: readonly string[];
  /** Secret paths this spec must carry (after keeping stored values for masked ones). */
  requiredSecrets?(spec: Spec): readonly string[];
  /** Messages for unique constraints other than the natural key. */
  readonly uniqueMessages?: Readonly<Record<string, (spec: Spec) => string>>;
}

export interface JsonResourceRepository<Spec> extends ResourceRepository<Spec> {
  /** The spec with secrets in clear, for the components that must use them. Never serve it. */
  findWithSecrets(db: Kysely<Database>, tenantId: string, key: string): Promise<StoredResource<Spec> | undefined>;
}

interface Row {
  id: string;
  tenant_id: string;
  key: string;
  spec: unknown;
  created_at: Date;
  updated_at: Date;
}

const pgCode = (error: unknown): { code?: string; constraint?: string } =>
  typeof error === 'object' && error !== null ? (error as { code?: string; constraint?: string }) : {};

const encodeCursor = (row: Row): string => Buffer.from(JSON.stringify([row.key, row.id]), 'utf8').toString('base64url');

function decodeCursor(cursor: string): [string, string] {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 2 && value.every((v) => typeof v === 'string')) return value as [string, string];
  } catch {
    // fall through to the precise error below
  }
  throw invalidArgument('cursor is not a cursor returned by this list', [{ path: 'cursor', message: 'unknown cursor' }]);
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const isUuid = (value: string): boolean => uuidPattern.test(value);

/** JSON round trip: what jsonb will hold, so comparisons see what the database sees. */
const canonical = (value: unknown): unknown => JSON.parse(JSON.stringify(value ?? null));

/** Renders `value` for a SQL parameter; arrays are cast so both drivers bind them as text[]. */
const param = (value: ColumnValue): RawBuilder<unknown> => (Array.isArray(value) ? sql`${[...value]}::text[]` : sql`${value}`);

export function createJsonResourceRepository<Spec>(config: JsonResourceConfig<Spec>, box: SecretBox): JsonResourceRepository<Spec> {
  const table = sql.table(config.table);
  const key = sql.ref(config.keyColumn);
  const paths = config.secretPaths ?? [];
  const secretOptions = (tenantId: string) => ({ box, tenantId, kind: config.kind, paths });
  const selectList = sql`id, tenant_id, ${key} as key, spec, created_at, updated_at`;

  const toStored = (row: Row): StoredResource<Spec> => ({
    id: row.id,
    tenantId: row.tenant_id,
    spec: maskSecrets(row.spec, paths) as Spec,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  });

  async function rowById(db: Kysely<Database>, tenantId: string, id: string): Promise<Row | undefined> {
    if (!isUuid(id)) return undefined;
    const result = await sql<Row>`select ${selectList} from ${table} where tenant_id = ${tenantId} and id = ${id}`.execute(db);
    return result.rows[0];
  }

  async function rowByKey(db: Kysely<Database>, tenantId: string, naturalKey: string): Promise<Row | undefined> {
    const result = await sql<Row>`select ${selectList} from ${table} where tenant_id = ${tenantId} and ${key} = ${naturalKey}`.execute(db);
    return result.rows[0];
  }

  function translate(error: unknown, spec: Spec): never {
    const { code, constraint } = pgCode(error);
    if (code === '23505') {
      const custom = constraint ? config.uniqueMessages?.[constraint] : undefined;
      throw alreadyExists(custom ? custom(spec) : `${config.noun} '${config.naturalKey(spec)}' already exists`);
    }
    if (code === '23503') {
      throw failedPrecondition(`${config.noun} '${config.naturalKey(spec)}' refers to a resource that no longer exists`);
    }
    throw error;
  }

  /** Validates, seals secrets (keeping stored ones for masked fields) and derives columns. */
  async function prepare(db: Kysely<Database>, tenantId: string, input: Spec, previous?: Row) {
    const spec = parseOrThrow(config.schema, input, config.noun) as Spec;
    const sealed = sealSecrets(spec, previous?.spec, secretOptions(tenantId));
    const missing = missingSecrets(sealed, config.requiredSecrets?.(spec) ?? []);
    if (missing.length > 0) {
      throw invalidArgument(
        `invalid ${config.noun}: ${missing[0]} is required`,
        missing.map((path) => ({ path, message: `${path} is required` })),
      );
    }
    const columns = (await config.columns?.(db, tenantId, spec)) ?? {};
    return { spec, sealed, columns };
  }

  /** `action` says what is refused, given the subject: (s) => `delete ${s}` -> "cannot delete recipe 'x': ...". */
  async function refuseIfUsed(db: Kysely<Database>, tenantId: string, row: Row, action: (subject: string) => string): Promise<void> {
    const users = (await config.usedBy?.(db, tenantId, row.id, row.key)) ?? [];
    if (users.length > 0) {
      throw new AppError('failed_precondition', `cannot ${action(`${config.noun} '${row.key}'`)}: it is used by ${users.join(', ')}`, {
        meta: { usedBy: users.join('; ') },
      });
    }
  }

  return {
    async list(db, tenantId, page: Page): Promise<PageResult<StoredResource<Spec>>> {
      const limit = Math.min(Math.max(Math.trunc(page.limit) || 50, 1), 200);
      const after = page.cursor ? decodeCursor(page.cursor) : undefined;
      const where = after ? sql`and (${key}, id) > (${after[0]}, ${after[1]}::uuid)` : sql``;
      const result = await sql<Row>`select ${selectList} from ${table} where tenant_id = ${tenantId} ${where}
        order by ${key}, id limit ${limit + 1}`.execute(db);
      const rows = result.rows.slice(0, limit);
      const last = rows[rows.length - 1];
      return {
        items: rows.map(toStored),
        ...(result.rows.length > limit && last ? { nextCursor: encodeCursor(last) } : {}),
      };
    },

    async get(db, tenantId, id) {
      const row = await rowById(db, tenantId, id);
      return row ? toStored(row) : undefined;
    },

    async findByNaturalKey(db, tenantId, naturalKey) {
      const row = await rowByKey(db, tenantId, naturalKey);
      return row ? toStored(row) : undefined;
    },

    async findWithSecrets(db, tenantId, naturalKey) {
      const row = await rowByKey(db, tenantId, naturalKey);
      if (!row) return undefined;
      return { ...toStored(row), spec: openSecrets(row.spec, secretOptions(tenantId)) as Spec };
    },

    async create(db, tenantId, input) {
      const { spec, sealed, columns } = await prepare(db, tenantId, input);
      const names = Object.keys(columns);
      const extraNames = names.map((n) => sql`, ${sql.ref(n)}`);
      const extraValues = names.map((n) => sql`, ${param(columns[n] as ColumnValue)}`);
      try {
        const result = await sql<Row>`insert into ${table} (tenant_id, ${key}, spec ${sql.join(extraNames, sql``)})
          values (${tenantId}, ${config.naturalKey(spec)}, ${JSON.stringify(sealed)}::jsonb ${sql.join(extraValues, sql``)})
          returning ${selectList}`.execute(db);
        return toStored(result.rows[0] as Row);
      } catch (error) {
        return translate(error, spec);
      }
    },

    async update(db, tenantId, id, input) {
      const previous = await rowById(db, tenantId, id);
      if (!previous) throw notFound(`${config.noun} ${id}`);
      const { spec, sealed, columns } = await prepare(db, tenantId, input, previous);
      const nextKey = config.naturalKey(spec);
      // Users name this resource by its key, so a rename would leave them pointing at nothing.
      if (nextKey !== previous.key) await refuseIfUsed(db, tenantId, previous, (subject) => `rename ${subject} to '${nextKey}'`);
      const sets = Object.keys(columns).map((n) => sql`, ${sql.ref(n)} = ${param(columns[n] as ColumnValue)}`);
      try {
        const result = await sql<Row>`update ${table} set ${key} = ${nextKey}, spec = ${JSON.stringify(sealed)}::jsonb,
          updated_at = now() ${sql.join(sets, sql``)}
          where tenant_id = ${tenantId} and id = ${id} returning ${selectList}`.execute(db);
        const row = result.rows[0];
        if (!row) throw notFound(`${config.noun} ${id}`);
        return toStored(row);
      } catch (error) {
        if (error instanceof AppError) throw error;
        return translate(error, spec);
      }
    },

    async delete(db, tenantId, id) {
      const row = await rowById(db, tenantId, id);
      if (!row) throw notFound(`${config.noun} ${id}`);
      await refuseIfUsed(db, tenantId, row, (subject) => `delete ${subject}`);
      try {
        await sql`delete from ${table} where tenant_id = ${tenantId} and id = ${id}`.execute(db);
      } catch (error) {
        // A user created between the check and the delete: the foreign key still refuses.
        if (pgCode(error).code === '23503') await refuseIfUsed(db, tenantId, row, (subject) => `delete ${subject}`);
        throw error;
      }
    },

    async isUnchanged(db, stored, input) {
      const row = await rowById(db, stored.tenantId, stored.id);
      if (!row) return false;
      const parsed = config.schema.safeParse(input);
      if (!parsed.success) return false;
      const spec = parsed.data;
      if (!secretsUnchanged(row.spec, spec, secretOptions(stored.tenantId))) return false;
      return isDeepStrictEqual(canonical(withoutSecrets(spec, paths)), canonical(withoutSecrets(row.spec, paths)));
    },
  };
}
