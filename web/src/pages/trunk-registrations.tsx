import { useEffect, useState } from 'react';
import { unwrap, type Schemas } from '../api/client';
import { ErrorBox } from '../components/error-box';
import { useSession } from '../session';

type Registration = Schemas['SipTrunkRegistrationList']['items'][number];

const when = (iso: string | null): string => (iso ? new Date(iso).toLocaleString() : '—');

/** How each registering trunk stands with its carrier's registrar, per gateway node (GET .../sip-trunk-registrations). */
export function TrunkRegistrationsBox({ clientId }: { clientId: string }) {
  const { api } = useSession();
  const [items, setItems] = useState<Registration[]>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    api.GET('/v1/tenants/{clientId}/sip-trunk-registrations', { params: { path: { clientId } } }).then((r) => setItems(unwrap(r).items), setError);
  }, [api, clientId]);
  if (error) return <ErrorBox error={error} title="Could not read the trunks' registrations" />;
  if (!items || items.length === 0) return null;
  return (
    <section className="panel" aria-labelledby="trunk-registrations">
      <h2 id="trunk-registrations">Registrations with carriers</h2>
      <table>
        <thead>
          <tr>
            <th scope="col">Trunk</th>
            <th scope="col">State</th>
            <th scope="col">Expires</th>
            <th scope="col">Last error</th>
            <th scope="col">Gateway contact</th>
          </tr>
        </thead>
        <tbody>
          {items.map((r) => (
            <tr key={`${r.trunk} ${r.contact}`}>
              <td data-label="Trunk">{r.trunk}</td>
              <td data-label="State" data-testid="registration-state">{r.state}{r.retryAt ? ` (retry ${when(r.retryAt)})` : ''}</td>
              <td data-label="Expires">{when(r.expiresAt)}</td>
              <td data-label="Last error">{r.lastError ?? '—'}</td>
              <td data-label="Gateway contact"><code>{r.contact}</code></td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
