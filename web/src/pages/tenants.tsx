import { unwrap } from '../api/client';
import { PageFooter, usePaged } from '../components/paged';
import { Link } from '../router';
import { useSession } from '../session';

/** The operator's tenant picker: every tenant, paged. */
export function TenantsPage() {
  const { api, signOut } = useSession();
  const list = usePaged(async (cursor) => unwrap(await api.GET('/v1/tenants', { params: { query: { limit: 50, ...(cursor ? { cursor } : {}) } } })), 'tenants');
  return (
    <main className="content narrow">
      <header className="row">
        <h1>Choose a tenant</h1>
        <button type="button" onClick={() => signOut()}>
          Sign out
        </button>
      </header>
      <ul className="cards">
        {list.items.map((t) => (
          <li key={t.id}>
            <Link href={`/t/${encodeURIComponent(t.spec.clientId)}/recipes`}>
              <strong>{t.spec.name}</strong> <span className="muted">{t.spec.clientId}</span>
            </Link>
          </li>
        ))}
      </ul>
      <PageFooter list={list} noun="tenants" />
    </main>
  );
}
