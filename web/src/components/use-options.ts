import { useEffect, useState } from 'react';
import { unwrap } from '../api/client';
import { useSession } from '../session';

export type OptionKind = 'recipes' | 'phone-numbers' | 'sip-trunks' | 'speech-profiles' | 'business-hours';

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
        const query = { limit: 200, ...(cursor ? { cursor } : {}) };
        const page = unwrap(await api.GET(`/v1/tenants/{clientId}/${kind}` as '/v1/tenants/{clientId}/recipes', { params: { path: { clientId }, query } }));
        for (const item of page.items) {
          const spec = item.spec as { name?: string; number?: string };
          const name = spec.name ?? spec.number ?? item.id;
          names.push(name);
          ids.set(name, item.id);
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

/** "a, b , c" -> ["a", "b", "c"]. */
export const splitList = (text: string): string[] =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
