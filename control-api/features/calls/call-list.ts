import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../../platform/store/schema.js';
import { isUuid, toCallRecord, whereFilter, type CallFilter } from './call-repository.js';
import type { CallRecord } from './call-types.js';

/**
 * The call list's pages: sorted by start time or duration, either way, paged by keyset cursors
 * in both directions. Each sort key has an index that starts with (tenant_id, key, id)
 * (migrations 0300 and 0330), so PostgreSQL walks the index from the cursor, forwards or
 * backwards, and stops after `limit + 1` rows however deep the page is (bench/call-list.ts).
 */
export const callSorts = ['startedAt', 'duration'] as const;
export type CallSort = (typeof callSorts)[number];
export const sortOrders = ['desc', 'asc'] as const;
export type SortOrder = (typeof sortOrders)[number];

export interface ListOrder {
  readonly sort: CallSort;
  readonly order: SortOrder;
}

/** Where a page starts: after (`next`) or before (`prev`) the row with this key and id. */
export interface ListCursor extends ListOrder {
  readonly direction: 'next' | 'prev';
  /** started_at as ISO text, or the duration in ms (-1 for a call still in progress). */
  readonly key: string | number;
  readonly id: string;
}

// An unfinished call has no duration: it sorts as -1 ms, below every finished one, which is the
// expression the duration index holds (a NULL would break the row-value comparison).
const durationKey = sql<number>`coalesce(calls.duration_ms, -1)`;

function keyOf(sort: CallSort): RawBuilder<unknown> {
  return sort === 'duration' ? durationKey : sql`calls.started_at`;
}

export function encodeListCursor(cursor: ListCursor): string {
  return Buffer.from(JSON.stringify([1, cursor.sort, cursor.order, cursor.direction, cursor.key, cursor.id]), 'utf8').toString('base64url');
}

/** The cursor, or a reason it is not one of this list's (the route answers 400 with it). */
export function decodeListCursor(text: string): ListCursor | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return 'is not a cursor returned by this list';
  }
  if (!Array.isArray(parsed) || parsed.length !== 6 || parsed[0] !== 1) return 'is not a cursor returned by this list';
  const [, sort, order, direction, key, id] = parsed as unknown[];
  if (!callSorts.includes(sort as CallSort) || !sortOrders.includes(order as SortOrder) || (direction !== 'next' && direction !== 'prev')) return 'is not a cursor returned by this list';
  if (typeof id !== 'string' || !isUuid(id)) return 'is not a cursor returned by this list';
  if (sort === 'duration' ? !Number.isInteger(key) : typeof key !== 'string' || Number.isNaN(Date.parse(key))) return 'is not a cursor returned by this list';
  return { sort: sort as CallSort, order: order as SortOrder, direction, key: key as string | number, id };
}

export interface CallListPage {
  readonly items: CallRecord[];
  readonly next?: ListCursor;
  readonly prev?: ListCursor;
}

export type ListPage = ListOrder & { readonly limit: number; readonly cursor?: ListCursor };

/** The page's query (`limit + 1` rows, in index order; a backwards page comes out reversed). */
export function callListQuery(db: Kysely<Database>, tenantId: string, filter: CallFilter, page: ListPage) {
  const { sort, order, limit, cursor } = page;
  // Walking back from a cursor reads the index the other way and turns the rows round after.
  const descending = (order === 'desc') !== (cursor?.direction === 'prev');
  const key = keyOf(sort);
  let query = whereFilter(db.selectFrom('calls').where('calls.tenant_id', '=', tenantId), filter);
  if (cursor) {
    const at = sort === 'duration' ? sql`${cursor.key}::integer` : sql`${cursor.key}::timestamptz`;
    // A row-value comparison, so the index scan starts at the cursor (see filteredCalls).
    query = query.where(descending ? sql<boolean>`(${key}, calls.id) < (${at}, ${cursor.id}::uuid)` : sql<boolean>`(${key}, calls.id) > (${at}, ${cursor.id}::uuid)`);
  }
  const direction = descending ? 'desc' : 'asc';
  return query
    .selectAll('calls')
    .orderBy(key, direction)
    .orderBy('calls.id', direction)
    .limit(limit + 1);
}

export async function listCallsSorted(db: Kysely<Database>, tenantId: string, filter: CallFilter, page: ListPage): Promise<CallListPage> {
  const { sort, order, limit, cursor } = page;
  const backwards = cursor?.direction === 'prev';
  const rows = await callListQuery(db, tenantId, filter, page).execute();
  const more = rows.length > limit;
  const kept = rows.slice(0, limit);
  if (backwards) kept.reverse();
  const first = kept[0];
  const last = kept[kept.length - 1];
  const at = (row: (typeof rows)[number], towards: 'next' | 'prev'): ListCursor => ({
    sort,
    order,
    direction: towards,
    key: sort === 'duration' ? (row.duration_ms ?? -1) : row.started_at.toISOString(),
    id: row.id,
  });
  // Forwards: a next page when a row was left over, a previous one when we came from a cursor;
  // backwards the other way round.
  const hasNext = backwards ? true : more;
  const hasPrev = backwards ? more : cursor !== undefined;
  return {
    items: kept.map(toCallRecord),
    ...(hasNext && last ? { next: at(last, 'next') } : {}),
    ...(hasPrev && first ? { prev: at(first, 'prev') } : {}),
  };
}
