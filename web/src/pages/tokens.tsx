import { useState, type FormEvent } from 'react';
import { ApiError, unwrap } from '../api/client';
import { ErrorBox } from '../components/error-box';
import { useAttempt } from '../components/use-attempt';
import { CheckField, TextField, issueAt } from '../components/field';
import { PageFooter, usePaged } from '../components/paged';
import { useSession } from '../session';

type Scope = 'campaign' | 'sandbox' | 'management';
const scopes: ReadonlyArray<readonly [Scope, string]> = [
  ['campaign', 'Campaign (SendMessage)'],
  ['management', 'Management (this dashboard and the API)'],
  ['sandbox', 'Plant sandbox'],
];

/** API tokens: issue (the secret is shown once), list (prefix only), revoke. */
export function TokensPage({ clientId }: { clientId: string }) {
  const { api } = useSession();
  const path = { clientId };
  const list = usePaged(async (cursor) => unwrap(await api.GET('/v1/tenants/{clientId}/tokens', { params: { path, query: { limit: 50, ...(cursor ? { cursor } : {}) } } })), clientId);
  const [name, setName] = useState('');
  const [chosen, setChosen] = useState<Set<Scope>>(new Set(['campaign']));
  const [expires, setExpires] = useState('');
  const [issued, setIssued] = useState<{ name: string; token: string }>();
  const [error, attempt] = useAttempt();
  const [rowError, attemptRow] = useAttempt();
  const issues = error instanceof ApiError ? (error.body.issues ?? []) : [];

  const issue = async (event: FormEvent) => {
    event.preventDefault();
    setIssued(undefined);
    await attempt(async () => {
      const body = { name: name.trim(), scopes: [...chosen], ...(expires ? { expiresAt: new Date(expires).toISOString() } : {}) };
      const created = unwrap(await api.POST('/v1/tenants/{clientId}/tokens', { params: { path }, body }));
      setIssued({ name: created.name, token: created.token });
      setName('');
      list.reload();
    });
  };
  const revoke = async (id: string) => {
    await attemptRow(async () => {
      unwrap(await api.DELETE('/v1/tenants/{clientId}/tokens/{tokenId}', { params: { path: { clientId, tokenId: id } } }));
      list.reload();
    });
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
      <ErrorBox error={rowError} title="Not revoked" />
      <table>
        <caption className="sr-only">Tokens</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Prefix</th>
            <th scope="col">Scopes</th>
            <th scope="col">Expires</th>
            <th scope="col">Last used</th>
            <th scope="col">State</th>
          </tr>
        </thead>
        <tbody>
          {list.items.map((t) => (
            <tr key={t.id}>
              <td>{t.name}</td>
              <td>
                <code>{t.prefix}</code>
              </td>
              <td>{t.scopes.join(', ')}</td>
              <td>{t.expiresAt ? new Date(t.expiresAt).toLocaleString() : 'never'}</td>
              <td>{t.lastUsedAt ? new Date(t.lastUsedAt).toLocaleString() : '—'}</td>
              <td>
                {t.revokedAt ? (
                  'revoked'
                ) : (
                  <button type="button" className="danger" onClick={() => revoke(t.id)} aria-label={`Revoke token ${t.name}`}>
                    Revoke
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <PageFooter list={list} noun="tokens" />
      <form className="panel" onSubmit={issue} aria-labelledby="new-token">
        <h2 id="new-token">Issue a token</h2>
        <TextField label="Token name" value={name} onChange={(e) => setName(e.target.value)} issue={issueAt(issues, 'name')} />
        <fieldset>
          <legend>Scopes</legend>
          {scopes.map(([value, label]) => (
            <CheckField
              key={value}
              label={label}
              checked={chosen.has(value)}
              onChange={(e) => {
                const next = new Set(chosen);
                if (e.target.checked) next.add(value);
                else next.delete(value);
                setChosen(next);
              }}
            />
          ))}
          {issueAt(issues, 'scopes') ? <small className="issue">{issueAt(issues, 'scopes')}</small> : null}
        </fieldset>
        <TextField label="Expires at (optional)" type="datetime-local" value={expires} onChange={(e) => setExpires(e.target.value)} issue={issueAt(issues, 'expiresAt')} />
        <ErrorBox error={error} title="The API refused the token" />
        <button type="submit" className="primary">
          Issue token
        </button>
      </form>
    </>
  );
}
