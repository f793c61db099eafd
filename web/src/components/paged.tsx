import { useCallback, useEffect, useRef, useState } from 'react';
import { ErrorBox } from './error-box';

export interface Page<T> {
  readonly items: readonly T[];
  readonly nextCursor?: string | undefined;
}

export interface Paged<T> {
  readonly items: readonly T[];
  readonly loading: boolean;
  readonly error: unknown;
  readonly hasMore: boolean;
  loadMore(): void;
  reload(): void;
  /** Replaces one item in place (after a PATCH) without reloading the list. */
  replace(match: (item: T) => boolean, next: T): void;
}

/**
 * A list read page by page with the API's cursors: the first page shows as soon as it arrives,
 * further pages are asked for by the user ("Load more"), so a long list never blocks the page.
 * `key` restarts from the first page (a filter changed).
 */
export function usePaged<T>(fetchPage: (cursor: string | undefined) => Promise<Page<T>>, key: string): Paged<T> {
  const [items, setItems] = useState<readonly T[]>([]);
  const [cursor, setCursor] = useState<string | undefined>();
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<unknown>();
  const [generation, setGeneration] = useState(0);
  const fetcher = useRef(fetchPage);
  fetcher.current = fetchPage;
  const run = useRef(0);

  const load = useCallback((after: string | undefined, append: boolean) => {
    const mine = ++run.current;
    setLoading(true);
    setError(undefined);
    fetcher.current(after).then(
      (page) => {
        if (mine !== run.current) return;
        setItems((old) => (append ? [...old, ...page.items] : page.items));
        setCursor(page.nextCursor);
        setLoading(false);
      },
      (failure: unknown) => {
        if (mine !== run.current) return;
        setError(failure);
        setLoading(false);
      },
    );
  }, []);

  useEffect(() => load(undefined, false), [key, generation, load]);

  return {
    items,
    loading,
    error,
    hasMore: cursor !== undefined,
    loadMore: () => load(cursor, true),
    reload: () => setGeneration((g) => g + 1),
    replace: (matchItem, next) => setItems((old) => old.map((item) => (matchItem(item) ? next : item))),
  };
}

/** "1 tenant", "2 tenants": every noun the lists use takes a plain -s. */
export const counted = (n: number, plural: string): string => `${n} ${n === 1 ? plural.replace(/s$/, '') : plural}`;

/** Status line and "Load more" under a paged list; announced politely to screen readers. */
export function PageFooter<T>({ list, noun }: { list: Paged<T>; noun: string }) {
  return (
    <div className="page-footer">
      <ErrorBox error={list.error} title={`Could not load ${noun}`} />
      <p aria-live="polite" className="muted">
        {list.loading ? `Loading ${noun}…` : `${counted(list.items.length, noun)} shown${list.hasMore ? ', more available' : ''}`}
      </p>
      {list.hasMore && (
        <button type="button" onClick={list.loadMore} disabled={list.loading}>
          Load more
        </button>
      )}
    </div>
  );
}
