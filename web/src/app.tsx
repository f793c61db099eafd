import { lazy, Suspense, useEffect, type ReactNode } from 'react';
import { CallDetailPage } from './pages/call-detail';
import { CallsPage } from './pages/calls';
import { CampaignsPage } from './pages/campaigns';
import { NumbersPage } from './pages/numbers';
import { RecipeEditorPage } from './pages/recipe-editor';
import { RecipesPage } from './pages/recipes';
import { ReportsPage } from './pages/reports';
import { SettingsPage } from './pages/settings';
import { SignInPage } from './pages/sign-in';
import { SpeechProfilesPage } from './pages/speech-profiles';
import { TenantsPage } from './pages/tenants';
import { TokensPage } from './pages/tokens';
import { TrunksPage } from './pages/trunks';
import { WordsPage } from './pages/words';
import { Link, match, navigate, useLocation } from './router';
import { useSessionState } from './session';

// sip.js is most of the bundle: loaded when the web call page opens, not at sign-in.
const WebCallPage = lazy(() => import('./pages/web-call').then((m) => ({ default: m.WebCallPage })));

/** The tenant's pages, in the order the navigation lists them. */
const tenantPages: ReadonlyArray<{ path: string; label: string; page: (clientId: string) => ReactNode }> = [
  { path: 'recipes', label: 'Recipes', page: (c) => <RecipesPage clientId={c} /> },
  { path: 'numbers', label: 'Phone numbers', page: (c) => <NumbersPage clientId={c} /> },
  { path: 'trunks', label: 'SIP trunks', page: (c) => <TrunksPage clientId={c} /> },
  { path: 'voices', label: 'Speech profiles', page: (c) => <SpeechProfilesPage clientId={c} /> },
  { path: 'words', label: 'Word management', page: (c) => <WordsPage clientId={c} /> },
  { path: 'campaigns', label: 'Campaigns', page: (c) => <CampaignsPage clientId={c} /> },
  { path: 'calls', label: 'Calls', page: (c) => <CallsPage clientId={c} /> },
  {
    path: 'web-call',
    label: 'Web call',
    page: (c) => (
      <Suspense fallback={<p aria-live="polite">Loading the phone…</p>}>
        <WebCallPage clientId={c} />
      </Suspense>
    ),
  },
  { path: 'reports', label: 'Reports', page: (c) => <ReportsPage clientId={c} /> },
  { path: 'tokens', label: 'API tokens', page: (c) => <TokensPage clientId={c} /> },
  { path: 'settings', label: 'Settings', page: (c) => <SettingsPage clientId={c} /> },
];

function TenantLayout({ clientId, current, children }: { clientId: string; current: string; children: ReactNode }) {
  const { session } = useSessionState();
  const base = `/t/${encodeURIComponent(clientId)}`;
  return (
    <div className="layout">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <nav aria-label="Main" className="sidebar">
        <p className="brand">
          Voice Agent Platform
          <span className="muted tenant">{clientId}</span>
        </p>
        <ul>
          {tenantPages.map((p) => (
            <li key={p.path}>
              <Link href={`${base}/${p.path}`} aria-current={current === p.path ? 'page' : undefined}>
                {p.label}
              </Link>
            </li>
          ))}
        </ul>
        <p className="sidebar-foot">
          {session?.who.kind === 'operator' ? <Link href="/tenants">Switch tenant</Link> : null}
          <button type="button" className="link" onClick={() => session?.signOut()}>
            Sign out
          </button>
        </p>
      </nav>
      <main id="main" className="content" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}

function Redirect({ to }: { to: string }) {
  useEffect(() => navigate(to, true), [to]);
  return null;
}

export function App() {
  const { session } = useSessionState();
  const { path } = useLocation();
  useEffect(() => {
    // Move focus to the new page's main region so keyboard and screen-reader users land on it.
    document.getElementById('main')?.focus({ preventScroll: true });
  }, [path]);
  if (!session) return path === '/' ? <SignInPage /> : <Redirect to="/" />;
  if (path === '/') return <Redirect to={session.who.kind === 'operator' ? '/tenants' : `/t/${encodeURIComponent(session.who.clientId)}/recipes`} />;
  if (path === '/tenants' && session.who.kind === 'operator') return <TenantsPage />;
  const recipe = match('/t/:clientId/recipes/:id', path);
  if (recipe?.clientId && recipe.id) {
    return (
      <TenantLayout clientId={recipe.clientId} current="recipes">
        <RecipeEditorPage clientId={recipe.clientId} recipeId={recipe.id} />
      </TenantLayout>
    );
  }
  const call = match('/t/:clientId/calls/:id', path);
  if (call?.clientId && call.id) {
    return (
      <TenantLayout clientId={call.clientId} current="calls">
        <CallDetailPage clientId={call.clientId} callId={call.id} />
      </TenantLayout>
    );
  }
  const page = match('/t/:clientId/:page', path);
  const known = page && tenantPages.find((p) => p.path === page.page);
  if (page?.clientId && known) {
    return (
      <TenantLayout clientId={page.clientId} current={known.path}>
        {known.page(page.clientId)}
      </TenantLayout>
    );
  }
  return (
    <main className="content narrow">
      <h1>Page not found</h1>
      <p>
        <Link href="/">Back to the start</Link>
      </p>
    </main>
  );
}
