import type { Kysely } from 'kysely';
import { z } from 'zod';
import { AppError } from '../../../core/errors.js';
import type { PageResult, ResourceDefinition, ResourceRepository, StoredResource } from '../../model/resources/resource-definition.js';
import type { Database } from '../../platform/store/schema.js';
import { fromZodError } from '../../platform/http/error-response.js';
import { filterableFields, type FilterKind } from './openapi/json-schema.js';

export const defaultPageLimit = 50;
export const maxPageLimit = 200;

export const pageQuerySchema = z.object({
  limit: z.coerce
    .number({ error: 'limit must be a number' })
    .int({ error: 'limit must be a whole number' })
    .min(1, { error: `limit must be between 1 and ${maxPageLimit}` })
    .max(maxPageLimit, { error: `limit must be between 1 and ${maxPageLimit}` })
    .default(defaultPageLimit),
  cursor: z.string().min(1, { error: 'cursor must not be empty' }).max(1024, { error: 'cursor is too long' }).optional(),
});

export interface ListQuery {
  readonly limit: number;
  readonly cursor?: string;
  /** Field -> wanted values (a repeated parameter gives several, all of which must match). */
  readonly filters: ReadonlyMap<string, readonly string[]>;
}

type QueryValue = string | string[] | undefined;

/** Parses `limit`, `cursor` and the kind's filter parameters; anything else is a 400 naming it. */
export function parseListQuery(query: Readonly<Record<string, QueryValue>>, filterable: Readonly<Record<string, FilterKind>>): ListQuery {
  const single = (name: string): string | undefined => {
    const v = query[name];
    if (Array.isArray(v)) throw new AppError('invalid_argument', `${name} may be given once`, { issues: [{ path: name, message: `${name} may be given once` }] });
    return v;
  };
  const parsed = pageQuerySchema.safeParse({ limit: single('limit'), cursor: single('cursor') });
  if (!parsed.success) throw fromZodError(parsed.error, 'query');
  const filters = new Map<string, string[]>();
  for (const [name, value] of Object.entries(query)) {
    if (name === 'limit' || name === 'cursor' || value === undefined) continue;
    const kind = filterable[name];
    if (!kind) {
      const allowed = ['limit', 'cursor', ...Object.keys(filterable)].join(', ');
      throw new AppError('invalid_argument', `unknown query parameter "${name}" (allowed: ${allowed})`, {
        issues: [{ path: name, message: 'unknown query parameter' }],
      });
    }
    const values = Array.isArray(value) ? value : [value];
    if (kind === 'boolean' && values.some((v) => v !== 'true' && v !== 'false')) {
      throw new AppError('invalid_argument', `${name} must be true or false`, { issues: [{ path: name, message: 'must be true or false' }] });
    }
    filters.set(name, values);
  }
  return { limit: parsed.data.limit, ...(parsed.data.cursor ? { cursor: parsed.data.cursor } : {}), filters };
}

/** The filter parameters a kind's list accepts: its own hook's, or one per top-level spec field. */
export function listFilterKinds(definition: ResourceDefinition): Readonly<Record<string, FilterKind>> {
  if (!definition.listFilter) return filterableFields(definition.schema);
  return Object.fromEntries(Object.entries(definition.listFilter.parameters).map(([name, p]) => [name, p.type]));
}

/** The predicate for a parsed query: the kind's own filter when it has one, generic matching otherwise. */
export function listPredicate(definition: ResourceDefinition, query: ListQuery): (spec: unknown) => boolean {
  if (definition.listFilter) return definition.listFilter.compile(query.filters);
  return (spec) => matches(spec, query.filters);
}

function matches(spec: unknown, filters: ReadonlyMap<string, readonly string[]>): boolean {
  const record = (spec ?? {}) as Record<string, unknown>;
  for (const [field, wanted] of filters) {
    const actual = record[field];
    const have = (Array.isArray(actual) ? actual : [actual]).filter((v) => v !== undefined && v !== null).map((v) => String(v).toLowerCase());
    if (!wanted.every((w) => have.includes(w.toLowerCase()))) return false;
  }
  return true;
}

// A filter scans at most this many repository pages per request, so a rare match cannot make one
// request walk a huge table; the client continues with `nextCursor`.
const maxScannedPages = 20;

/**
 * One page of a kind, filtered. Filters apply over the repository's pages (the contract pages by
 * cursor only); each scanned page is asked for exactly the items still missing, so cursors stay
 * exact. A filtered page may hold fewer than `limit` items: continue while `nextCursor` is present.
 */
export async function listPage<Spec>(
  db: Kysely<Database>,
  repository: ResourceRepository<Spec>,
  tenantId: string,
  query: ListQuery,
  predicate: (spec: Spec) => boolean = (spec) => matches(spec, query.filters),
): Promise<PageResult<StoredResource<Spec>>> {
  if (query.filters.size === 0) return repository.list(db, tenantId, { limit: query.limit, ...(query.cursor ? { cursor: query.cursor } : {}) });
  const items: StoredResource<Spec>[] = [];
  let cursor = query.cursor;
  for (let scanned = 0; scanned < maxScannedPages && items.length < query.limit; scanned += 1) {
    const page = await repository.list(db, tenantId, { limit: query.limit - items.length, ...(cursor ? { cursor } : {}) });
    items.push(...page.items.filter((item) => predicate(item.spec)));
    cursor = page.nextCursor;
    if (!cursor) break;
  }
  return { items, ...(cursor ? { nextCursor: cursor } : {}) };
}
