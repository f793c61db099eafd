import { useState } from 'react';
import { unwrap, type Schemas } from '../api/client';
import { CreatePanel, useCreateForm } from '../components/create-form';
import { CheckSet, TextField, issueAt } from '../components/field';
import { usePaged } from '../components/paged';
import { ResourceList, type Column } from '../components/resource-list';
import { useSession } from '../session';

type Token = Schemas['Token'];
type Scope = Token['scopes'][number];
const scopes: ReadonlyArray<readonly [Scope, string]> = [
  ['campaign', 'Campaign (SendMessage)'],
  ['management', 'Management (this dashboard and the API)'],
  ['sandbox', 'Plant sandbox'],
];

const columns: ReadonlyArray<Column<Token>> = [
  { header: 'Name', cell: (t) => t.name },
  { header: 'Prefix', cell: (t) => <code>{t.prefix}</code> },
  { header: 'Scopes', cell: (t) => t.scopes.join(', ') },
  { header: 'Expires', cell: (t) => (t.expiresAt ? new Date(t.expiresAt).toLocaleString() : 'never') },
  { header: 'Last used', cell: (t) => (t.lastUsedAt ? new Date(t.lastUsedAt).toLocaleString() : '—') },
];

/** API tokens: issue (the secret is shown once), list (prefix only), revoke. */
export function TokensPage({ clientId }: { clientId: string }) {
  const { api } = useSession();
  const path = { clientId };
  const list = usePaged(async (cursor) => unwrap(await api.GET('/v1/tenants/{clientId}/tokens', { params: { path, query: { limit: 50, ...(cursor ? { cursor } : {}) } } })), clientId);
  const f = useCreateForm({ name: '', expires: '' });
  const [chosen, setChosen] = useState<Set<Scope>>(new Set(['campaign']));
  const [issued, setIssued] = useState<{ name: string; token: string }>();

  const issue = async () => {
    setIssued(undefined);
    const { name, expires } = f.form;
    const body = { name: name.trim(), scopes: [...chosen], ...(expires ? { expiresAt: new Date(expires).toISOString() } : {}) };
    const created = unwrap(await api.POST('/v1/tenants/{clientId}/tokens', { params: { path }, body }));
    setIssued({ name: created.name, token: created.token });
    f.setForm({ ...f.form, name: '' });
    list.reload();
  };
  const state: Column<Token> = {
    header: 'State',
    cell: (t, act) =>
      t.revokedAt ? (
        'revoked'
      ) : (
        <button
          type="button"
          className="danger"
          onClick={() =>
            act(async () => {
              unwrap(await api.DELETE('/v1/tenants/{clientId}/tokens/{tokenId}', { params: { path: { clientId, tokenId: t.id } } }));
              list.reload();
            })
          }
          aria-label={`Revoke token ${t.name}`}
        >
          Revoke
        </button>
      ),
  };

  return (
    <>
      <h1>API tokens</h1>
      {issued ? (
        <div className="notice" role="status">
          <p>
            Token <strong>{issued.name}</strong> issued. Copy it now: it is not shown again.
          </p>
          <pre className="snippet" data-testid="issued-token" tabIndex={0}>
            {issued.token}
          </pre>
        </div>
      ) : null}
      <ResourceList caption="Tokens" noun="tokens" list={list} columns={[...columns, state]} actionError="Not revoked" />
      <CreatePanel
        id="new-token"
        title="Issue a token"
        submit="Issue token"
        refused="The API refused the token"
        form={f}
        onCreate={issue}
        after={<CheckSet legend="Scopes" options={scopes} chosen={chosen} onChange={setChosen} issue={issueAt(f.issues, 'scopes')} />}
      >
        <TextField label="Token name" {...f.text('name')} />
        <TextField label="Expires at (optional)" type="datetime-local" {...f.text('expires', 'expiresAt')} />
      </CreatePanel>
    </>
  );
}
