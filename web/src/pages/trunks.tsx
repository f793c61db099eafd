import { useEffect, useState } from 'react';
import { editedBody, unwrap, type Schemas } from '../api/client';
import { CreatePanel, useCreateForm } from '../components/create-form';
import { ErrorBox } from '../components/error-box';
import { SelectField, TextField } from '../components/field';
import { usePaged } from '../components/paged';
import { ResourceList, type Column } from '../components/resource-list';
import { splitList } from '../components/use-options';
import { useSession } from '../session';
import { TrunkRegistrationsBox } from './trunk-registrations';

type TrunkSpec = Schemas['SipTrunkSpec'];
type Trunk = Schemas['SipTrunk'];
type Transport = NonNullable<NonNullable<TrunkSpec['outbound']>['transport']>;
const transports: ReadonlyArray<readonly [Transport, string]> = [['udp', 'UDP'], ['tcp', 'TCP'], ['tls', 'TLS']];
const transportOf = (value: string): Transport => transports.find(([t]) => t === value)?.[0] ?? 'udp';

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
  const f = useCreateForm({ name: '', addresses: '', dids: '', extension: '', outAddress: '', outPort: '', transport: 'udp', username: '', password: '' });
  const { form } = f;

  const create = async () => {
    const outbound: NonNullable<TrunkSpec['outbound']> = {
      ...(form.outAddress ? { address: form.outAddress.trim() } : {}),
      ...(form.outPort ? { port: Number(form.outPort) } : {}),
      transport: transportOf(form.transport),
      ...(form.username ? { username: form.username } : {}),
      ...(form.password ? { password: form.password } : {}),
    };
    const body: TrunkSpec = {
      name: form.name.trim(),
      inbound: { terminationAddresses: splitList(form.addresses), dids: splitList(form.dids), ...(form.extension ? { extension: form.extension.trim() } : {}) },
      outbound,
    };
    unwrap(await api.POST('/v1/tenants/{clientId}/sip-trunks', { params: { path }, body }));
    f.setForm({ ...form, name: '', password: '' });
    list.reload();
  };
  const columns: ReadonlyArray<Column<Trunk>> = [
    { header: 'Name', cell: (t) => t.spec.name },
    { header: 'Termination addresses', cell: (t) => t.spec.inbound.terminationAddresses.join(', ') },
    { header: 'DIDs', cell: (t) => t.spec.inbound.dids.join(', ') },
    { header: 'Extension', cell: (t) => t.spec.inbound.extension },
    { header: 'Outbound', cell: (t) => (t.spec.outbound.address ? `${t.spec.outbound.address}:${t.spec.outbound.port ?? 5060} ${t.spec.outbound.transport}` : '—') },
  ];

  return (
    <>
      <h1>SIP trunks</h1>
      <SipInfoBox clientId={clientId} />
      <TrunkRegistrationsBox clientId={clientId} />
      <ResourceList
        caption="SIP trunks"
        noun="trunks"
        list={list}
        columns={columns}
        // Generic over the trunk schema: fields the schema gains are edited here too.
        edit={{
          title: (t) => `Edit trunk ${t.spec.name}`,
          spec: (t) => t.spec,
          save: async (t, spec) => unwrap(await api.PUT('/v1/tenants/{clientId}/sip-trunks/{id}', { params: { path: { clientId, id: t.id } }, body: editedBody(spec) })),
        }}
        remove={{
          label: (t) => `Delete trunk ${t.spec.name}`,
          run: async (t) => void unwrap(await api.DELETE('/v1/tenants/{clientId}/sip-trunks/{id}', { params: { path: { clientId, id: t.id } } })),
        }}
      />
      <CreatePanel id="new-trunk" title="New SIP trunk" submit="Add trunk" refused="The API refused the trunk" form={f} onCreate={create}>
        <TextField label="Name" {...f.text('name')} />
        <TextField label="Termination addresses (IP or FQDN, comma separated)" {...f.text('addresses', 'inbound.terminationAddresses')} />
        <TextField label="DIDs (comma separated)" {...f.text('dids', 'inbound.dids')} />
        <TextField label="Extension number" {...f.text('extension', 'inbound.extension')} />
        <TextField label="Outbound address" {...f.text('outAddress', 'outbound.address')} />
        <TextField label="Outbound port" inputMode="numeric" {...f.text('outPort', 'outbound.port')} />
        <SelectField label="Outbound transport" {...f.text('transport', 'outbound.transport')} options={transports} />
        <TextField label="SIP username" autoComplete="off" {...f.text('username', 'outbound.username')} />
        <TextField label="SIP password" type="password" autoComplete="new-password" {...f.text('password', 'outbound.password')} />
      </CreatePanel>
    </>
  );
}
