import { useCallback, useEffect, useRef, useSyncExternalStore, type AnchorHTMLAttributes, type MouseEvent } from 'react';

/**
 * A small History API router: the dashboard has a dozen fixed routes, and the control role answers
 * index.html for any of them (control-api/platform/http/dashboard.ts), so a reload keeps the page.
 */
const listeners = new Set<() => void>();
const subscribe = (listener: () => void): (() => void) => {
  listeners.add(listener);
  window.addEventListener('popstate', listener);
  return () => {
    listeners.delete(listener);
    window.removeEventListener('popstate', listener);
  };
};

/**
 * A page with unsaved work registers a guard: it returns the question to ask before leaving, or
 * undefined when there is nothing to lose. Every in-app navigation (links, `navigate`, the back
 * button) asks it first; a reload or a closed tab is the page's `beforeunload` (useLeaveGuard).
 */
type Guard = () => string | undefined;
const guards = new Set<Guard>();

function mayLeave(): boolean {
  for (const guard of guards) {
    const question = guard();
    if (question !== undefined && !window.confirm(question)) return false;
  }
  return true;
}

let here = window.location.pathname + window.location.search;
window.addEventListener('popstate', () => {
  const there = window.location.pathname + window.location.search;
  if (there === here) return;
  // Back/forward already moved the URL: put it back when the user stays.
  if (!mayLeave()) {
    window.history.pushState(null, '', here);
    return;
  }
  here = there;
});

/** While `question()` says there is unsaved work, leaving the page asks first (in-app and on reload). */
export function useLeaveGuard(question: () => string | undefined): void {
  const latest = useRef(question);
  latest.current = question;
  useEffect(() => {
    const guard: Guard = () => latest.current();
    guards.add(guard);
    const unload = (event: BeforeUnloadEvent) => {
      if (latest.current() === undefined) return;
      event.preventDefault();
      // Chromium before 119 shows the prompt only when returnValue is set.
      event.returnValue = '';
    };
    window.addEventListener('beforeunload', unload);
    return () => {
      guards.delete(guard);
      window.removeEventListener('beforeunload', unload);
    };
  }, []);
}

export function navigate(to: string, replace = false): void {
  if (!replace && !mayLeave()) return;
  here = to;
  if (replace) window.history.replaceState(null, '', to);
  else window.history.pushState(null, '', to);
  for (const listener of listeners) listener();
}

/** The current path and query string. */
export function useLocation(): { path: string; search: string } {
  const path = useSyncExternalStore(subscribe, () => window.location.pathname);
  const search = useSyncExternalStore(subscribe, () => window.location.search);
  return { path, search };
}

/** Matches `/t/:clientId/calls/:id` style patterns; undefined when the path does not fit. */
export function match(pattern: string, path: string): Record<string, string> | undefined {
  const want = pattern.split('/').filter(Boolean);
  const have = path.split('/').filter(Boolean);
  if (want.length !== have.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i] as string;
    const h = have[i] as string;
    if (w.startsWith(':')) params[w.slice(1)] = decodeURIComponent(h);
    else if (w !== h) return undefined;
  }
  return params;
}

/** An anchor that navigates without a reload (modifier clicks still open a new tab). */
export function Link(props: AnchorHTMLAttributes<HTMLAnchorElement> & { href: string }) {
  const { href, onClick } = props;
  const handle = useCallback(
    (event: MouseEvent<HTMLAnchorElement>) => {
      onClick?.(event);
      if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
      event.preventDefault();
      navigate(href);
    },
    [href, onClick],
  );
  return <a {...props} onClick={handle} />;
}
