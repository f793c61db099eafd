import { Fragment, useEffect, useState, type FormEvent } from 'react';
import { ApiError, unwrap, type Schemas } from '../api/client';
import { ErrorBox } from '../components/error-box';
import { useAttempt } from '../components/use-attempt';
import { SelectField, TextField, issueAt } from '../components/field';
import { PageFooter, usePaged } from '../components/paged';
import { splitList } from '../components/use-options';
import { SpecEditor } from '../components/spec-editor';
import { useSession } from '../session';
import { TrunkRegistrationsBox } from './trunk-registrations';

type TrunkSpec = Schemas['SipTrunkSpec'];

/** What the customer configures on their side: the service's signalling address and transports. */
function SipInfoBox({ clientId }: { clientId: string }) {
  const { api } = useSession();
  const [info, setInfo] = useState<Schemas['SipInfo']>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    api.GET('/v1/tenants/{clientId}/sip-info', { params: { path: { clientId } } }).then((r) => setInfo(unwrap(r)), setError);
  }, [api, clientId]);
  if (error) return <ErrorBox error={error} title="Could not read the service's SIP address" />;
  if (!info) return <p aria-live="polite">Loading the service's SIP address…</p>;
  return (
    <section className="panel" aria-labelledby="sip-info">
      <h2 id="sip-info">The service's SIP signalling address</h2>
      <p>
        Send INVITEs to <strong data-testid="signalling-address">{info.signalingAddress}</strong>; allow RTP from {info.media.address} ports {info.media.rtpPortMin}–{info.media.rtpPortMax}.
      </p>
      <ul>
        {info.transports.map((t) => (
          <li key={t.transport}>
            {t.transport.toUpperCase()} port {t.port}: <code>{t.uri}</code>
            {t.certificate ? ` (${t.certificate === 'configured' ? 'configured certificate' : 'self-signed certificate'})` : ''}
          </li>
        ))}
      </ul>
    </section>
  );
}

/** Custom SIP trunks (bring your own carrier): the list, a new trunk, and the service's address. */
export function TrunksPage({ clientId }: { clientId: string }) {
  const { api } = useSession();
  const path = { clientId };
  const list = usePaged(async (cursor) => unwrap(await api.GET('/v1/tenants/{clientId}/sip-trunks', { params: { path, query: { limit: 50, ...(cursor ? { cursor } : {}) } } })), clientId);
  const [form, setForm] = useState({ name: '', addresses: '', dids: '', extension: '', outAddress: '', outPort: '', transport: 'udp', username: '', password: '' });
  const [error, attempt] = useAttempt();
  const [rowError, attemptRow] = useAttempt();
  const [editing, setEditing] = useState<string>();
  const issues = error instanceof ApiError ? (error.body.issues ?? []) : [];
  const set = (key: keyof typeof form) => (e: { target: { value: string } }) => setForm({ ...form, [key]: e.target.value });

  const create = async (event: FormEvent) => {
    event.preventDefault();
    const outbound: NonNullable<TrunkSpec['outbound']> = {
      ...(form.outAddress ? { address: form.outAddress.trim() } : {}),
      ...(form.outPort ? { port: Number(form.outPort) } : {}),
      transport: form.transport as 'udp' | 'tcp' | 'tls',
      ...(form.username ? { username: form.username } : {}),
      ...(form.password ? { password: form.password } : {}),
    };
    const body: TrunkSpec = {
      name: form.name.trim(),
      inbound: { terminationAddresses: splitList(form.addresses), dids: splitList(form.dids), ...(form.extension ? { extension: form.extension.trim() } : {}) },
      outbound,
    };
    await attempt(async () => {
      unwrap(await api.POST('/v1/tenants/{clientId}/sip-trunks', { params: { path }, body }));
      setForm({ ...form, name: '', password: '' });
      list.reload();
    });
  };
  const remove = async (id: string) => {
    await attemptRow(async () => {
      unwrap(await api.DELETE('/v1/tenants/{clientId}/sip-trunks/{id}', { params: { path: { clientId, id } } }));
      list.reload();
    });
  };

  return (
    <>
      <h1>SIP trunks</h1>
      <SipInfoBox clientId={clientId} />
      <TrunkRegistrationsBox clientId={clientId} />
      <ErrorBox error={rowError} />
      <table>
        <caption className="sr-only">SIP trunks</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Termination addresses</th>
            <th scope="col">DIDs</th>
            <th scope="col">Extension</th>
            <th scope="col">Outbound</th>
            <th scope="col">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {list.items.map((t) => (
            <Fragment key={t.id}>
              <tr>
                <td data-label="Name">{t.spec.name}</td>
                <td data-label="Termination addresses">{(t.spec.inbound.terminationAddresses as string[]).join(', ')}</td>
                <td data-label="DIDs">{(t.spec.inbound.dids as string[] | undefined)?.join(', ')}</td>
                <td data-label="Extension">{t.spec.inbound.extension}</td>
                <td data-label="Outbound">{t.spec.outbound?.address ? `${String(t.spec.outbound.address)}:${t.spec.outbound.port ?? 5060} ${t.spec.outbound.transport ?? ''}` : '—'}</td>
                <td>
                  <div className="row">
                    <button type="button" onClick={() => setEditing(editing === t.id ? undefined : t.id)} aria-expanded={editing === t.id} aria-label={`Edit trunk ${t.spec.name}`}>
                      Edit
                    </button>
                    <button type="button" className="danger" onClick={() => remove(t.id)} aria-label={`Delete trunk ${t.spec.name}`}>
                      Delete
                    </button>
                  </div>
                </td>
              </tr>
              {editing === t.id ? (
                <tr>
                  <td colSpan={6}>
                    {/* Generic over the trunk schema: fields the schema gains are edited here too. */}
                    <SpecEditor
                      title={`Edit trunk ${t.spec.name}`}
                      spec={t.spec as never}
                      onCancel={() => setEditing(undefined)}
                      onSave={async (spec) => {
                        const updated = unwrap(await api.PUT('/v1/tenants/{clientId}/sip-trunks/{id}', { params: { path: { clientId, id: t.id } }, body: spec as never }));
                        list.replace((x) => x.id === t.id, updated);
                        setEditing(undefined);
                      }}
                    />
                  </td>
                </tr>
              ) : null}
            </Fragment>
          ))}
        </tbody>
      </table>
      <PageFooter list={list} noun="trunks" />
      <form className="panel" onSubmit={create} aria-labelledby="new-trunk">
        <h2 id="new-trunk">New SIP trunk</h2>
        <div className="row wrap">
          <TextField label="Name" value={form.name} onChange={set('name')} issue={issueAt(issues, 'name')} />
          <TextField label="Termination addresses (IP or FQDN, comma separated)" value={form.addresses} onChange={set('addresses')} issue={issueAt(issues, 'inbound.terminationAddresses')} />
          <TextField label="DIDs (comma separated)" value={form.dids} onChange={set('dids')} issue={issueAt(issues, 'inbound.dids')} />
          <TextField label="Extension number" value={form.extension} onChange={set('extension')} issue={issueAt(issues, 'inbound.extension')} />
          <TextField label="Outbound address" value={form.outAddress} onChange={set('outAddress')} issue={issueAt(issues, 'outbound.address')} />
          <TextField label="Outbound port" inputMode="numeric" value={form.outPort} onChange={set('outPort')} issue={issueAt(issues, 'outbound.port')} />
          <SelectField label="Outbound transport" value={form.transport} onChange={set('transport')} options={[['udp', 'UDP'], ['tcp', 'TCP'], ['tls', 'TLS']]} issue={issueAt(issues, 'outbound.transport')} />
          <TextField label="SIP username" autoComplete="off" value={form.username} onChange={set('username')} issue={issueAt(issues, 'outbound.username')} />
          <TextField label="SIP password" type="password" autoComplete="new-password" value={form.password} onChange={set('password')} issue={issueAt(issues, 'outbound.password')} />
        </div>
        <ErrorBox error={error} title="The API refused the trunk" />
        <button type="submit" className="primary">
          Add trunk
        </button>
      </form>
    </>
  );
}
