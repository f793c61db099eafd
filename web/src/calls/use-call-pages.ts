import { useEffect, useRef, useState } from 'react';
import { unwrap, type ManagementClient, type Schemas } from '../api/client';

export type CallItem = Schemas['Call'];
type ListQuery = Readonly<Record<string, unknown>>;

export interface CallPages {
  readonly items: readonly CallItem[];
  readonly loading: boolean;
  readonly error: unknown;
  readonly hasNewer: boolean;
  readonly hasOlder: boolean;
  /** Page number from the first (1-based), for the status line. */
  readonly page: number;
  next(): void;
  prev(): void;
  reload(): void;
  replace(id: string, call: CallItem): void;
}

/**
 * The call list one page at a time with the API's two cursors (`nextCursor`, `prevCursor`): a page
 * never grows, so the newest call stays at the top however long the history is. A change of
 * `query` (filters, sort) starts again at the first page.
 */
export function useCallPages(api: ManagementClient, clientId: string, query: ListQuery): CallPages {
  const key = `${clientId}:${JSON.stringify(query)}`;
  const [cursor, setCursor] = useState<{ key: string; value?: string; page: number }>({ key, page: 1 });
  // Each answer names the request it answers: in the render right after Newer/Older the page number
  // has moved but the rows are still the old page's, and that render must say Loading, not
  // "Page 1" over page 2's rows.
  const [result, setResult] = useState<{ for?: string; items: readonly CallItem[]; next?: string; prev?: string; error?: unknown }>({ items: [] });
  const [generation, setGeneration] = useState(0);
  const run = useRef(0);
  const current = cursor.key === key ? cursor : { key, page: 1 };
  const request = `${key}|${current.value ?? ''}|${generation}`;

  useEffect(() => {
    const mine = ++run.current;
    const params = { path: { clientId }, query: { limit: 50, ...query, ...(current.value ? { cursor: current.value } : {}) } };
    api.GET('/v1/tenants/{clientId}/calls', { params }).then(
      (response) => {
        if (mine !== run.current) return;
        const page = unwrap(response);
        setResult({ for: request, items: page.items, ...(page.nextCursor ? { next: page.nextCursor } : {}), ...(page.prevCursor ? { prev: page.prevCursor } : {}) });
      },
      (failure: unknown) => {
        if (mine !== run.current) return;
        setResult((old) => ({ ...old, for: request, error: failure }));
      },
    );
    // `key` stands for `query` (a new object each render).
  }, [api, key, current.value, generation]);

  return {
    items: result.items,
    loading: result.for !== request,
    error: result.for === request ? result.error : undefined,
    hasNewer: result.prev !== undefined,
    hasOlder: result.next !== undefined,
    page: current.page,
    next: () => result.next && setCursor({ key, value: result.next, page: current.page + 1 }),
    prev: () => result.prev && setCursor({ key, value: result.prev, page: Math.max(1, current.page - 1) }),
    reload: () => setGeneration((g) => g + 1),
    replace: (id, call) => setResult((old) => ({ ...old, items: old.items.map((c) => (c.id === id ? call : c)) })),
  };
}
