import { createContext, useCallback, useContext, useMemo, useState, type ReactNode } from 'react';
import { managementClient, type ManagementClient, type Schemas } from './api/client';

export type Whoami = Schemas['Whoami'];

export interface Session {
  readonly token: string;
  readonly who: Whoami;
  readonly api: ManagementClient;
  signOut(message?: string): void;
}

interface SessionState {
  readonly session: Session | undefined;
  /** Why the last session ended (an expired or revoked token), shown on the sign-in page. */
  readonly notice: string | undefined;
  signIn(token: string, who: Whoami): void;
}

// sessionStorage, not localStorage: the token lives as long as the tab, and is never written to a
// cookie the browser would send on its own.
const storageKey = 'vap.session';

interface Stored {
  readonly token: string;
  readonly who: Whoami;
}

function readStored(): Stored | undefined {
  try {
    const raw = window.sessionStorage.getItem(storageKey);
    return raw ? (JSON.parse(raw) as Stored) : undefined;
  } catch {
    return undefined;
  }
}

const SessionContext = createContext<SessionState | undefined>(undefined);

export function SessionProvider({ children }: { children: ReactNode }) {
  const [stored, setStored] = useState<Stored | undefined>(readStored);
  const [notice, setNotice] = useState<string | undefined>();
  const signOut = useCallback((message?: string) => {
    window.sessionStorage.removeItem(storageKey);
    setStored(undefined);
    setNotice(message);
  }, []);
  const signIn = useCallback((token: string, who: Whoami) => {
    window.sessionStorage.setItem(storageKey, JSON.stringify({ token, who }));
    setNotice(undefined);
    setStored({ token, who });
  }, []);
  const session = useMemo<Session | undefined>(() => {
    if (!stored) return undefined;
    const api = managementClient(stored.token, () => signOut('The token was refused (expired or revoked). Sign in again.'));
    return { token: stored.token, who: stored.who, api, signOut };
  }, [stored, signOut]);
  const value = useMemo(() => ({ session, notice, signIn }), [session, notice, signIn]);
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSessionState(): SessionState {
  const state = useContext(SessionContext);
  if (!state) throw new Error('useSessionState outside SessionProvider');
  return state;
}

/** The signed-in session; only pages behind the sign-in use it. */
export function useSession(): Session {
  const { session } = useSessionState();
  if (!session) throw new Error('not signed in');
  return session;
}
