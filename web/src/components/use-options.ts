import { useEffect, useState } from 'react';
import { unwrap, type ManagementClient } from '../api/client';
import { useSession } from '../session';

export type OptionKind = 'recipes' | 'phone-numbers' | 'sip-trunks' | 'speech-profiles' | 'business-hours';

interface NamePage {
  readonly items: ReadonlyArray<{ readonly id: string; readonly name: string }>;
  readonly nextCursor?: string | undefined;
}
type NamePageReader = (api: ManagementClient, clientId: string, cursor: string | undefined) => Promise<NamePage>;

const pageQuery = (clientId: string, cursor: string | undefined) => ({ params: { path: { clientId }, query: { limit: 200, ...(cursor ? { cursor } : {}) } } });
const named = <T extends { id: string }>(page: { items: T[]; nextCursor?: string }, name: (item: T) => string): NamePage => ({
  items: page.items.map((item) => ({ id: item.id, name: name(item) })),
  nextCursor: page.nextCursor,
});

/** How each kind is read and named: specs refer to each other by these names (a number by its number). */
const readers: Record<OptionKind, NamePageReader> = {
  recipes: async (api, clientId, cursor) => named(unwrap(await api.GET('/v1/tenants/{clientId}/recipes', pageQuery(clientId, cursor))), (r) => r.spec.name),
  'phone-numbers': async (api, clientId, cursor) => named(unwrap(await api.GET('/v1/tenants/{clientId}/phone-numbers', pageQuery(clientId, cursor))), (n) => n.spec.number),
  'sip-trunks': async (api, clientId, cursor) => named(unwrap(await api.GET('/v1/tenants/{clientId}/sip-trunks', pageQuery(clientId, cursor))), (t) => t.spec.name),
  'speech-profiles': async (api, clientId, cursor) => named(unwrap(await api.GET('/v1/tenants/{clientId}/speech-profiles', pageQuery(clientId, cursor))), (p) => p.spec.name),
  'business-hours': async (api, clientId, cursor) => named(unwrap(await api.GET('/v1/tenants/{clientId}/business-hours', pageQuery(clientId, cursor))), (b) => b.spec.name),
};

/**
 * Names of a kind for a select (references are by name in specs). Reads every page (200 at a time):
 * a tenant has tens of these, not thousands; the lists themselves are paged.
 */
export function useNames(clientId: string, kind: OptionKind): { names: string[]; ids: Map<string, string> } {
  const { api } = useSession();
  const [state, setState] = useState<{ names: string[]; ids: Map<string, string> }>({ names: [], ids: new Map() });
  useEffect(() => {
    let cancelled = false;
    (async () => {
      const names: string[] = [];
      const ids = new Map<string, string>();
      let cursor: string | undefined;
      do {
        const page = await readers[kind](api, clientId, cursor);
        for (const item of page.items) {
          names.push(item.name);
          ids.set(item.name, item.id);
        }
        cursor = page.nextCursor;
      } while (cursor && !cancelled);
      if (!cancelled) setState({ names, ids });
    })().catch(() => undefined);
    return () => {
      cancelled = true;
    };
  }, [api, clientId, kind]);
  return state;
}

/** A select's options for names, after a first empty choice ("— choose —"). */
export const choices = (empty: string, names: readonly string[]): Array<readonly [string, string]> => [['', empty], ...names.map((n) => [n, n] as const)];

/** "a, b , c" -> ["a", "b", "c"]. */
export const splitList = (text: string): string[] =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
