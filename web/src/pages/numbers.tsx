import { editedBody, unwrap, type Schemas } from '../api/client';
import { CreatePanel, useCreateForm } from '../components/create-form';
import { CheckField, SelectField, TextField } from '../components/field';
import { usePaged } from '../components/paged';
import { ResourceList, type Column } from '../components/resource-list';
import { choices, splitList, useNames } from '../components/use-options';
import { useSession } from '../session';

type NumberSpec = Schemas['PhoneNumberSpec'];
type PhoneNumber = Schemas['PhoneNumber'];

/** Phone numbers: the list with each number's status toggle, and a form for a new one. */
export function NumbersPage({ clientId }: { clientId: string }) {
  const { api } = useSession();
  const path = { clientId };
  const list = usePaged(async (cursor) => unwrap(await api.GET('/v1/tenants/{clientId}/phone-numbers', { params: { path, query: { limit: 50, ...(cursor ? { cursor } : {}) } } })), clientId);
  const recipes = useNames(clientId, 'recipes');
  const trunks = useNames(clientId, 'sip-trunks');
  const voices = useNames(clientId, 'speech-profiles');
  const f = useCreateForm({ number: '', recipe: '', provider: 'nativeStack', trunk: '', language: 'en-IN', voice: '', boostedKeywords: '', silence: '2', maxDuration: '10' });
  const { form } = f;

  const create = async () => {
    const provider: NumberSpec['provider'] = form.provider === 'customSipTrunk' ? { type: 'customSipTrunk', trunk: form.trunk } : { type: 'nativeStack' };
    const body: NumberSpec = {
      number: form.number.trim(),
      recipe: form.recipe,
      provider,
      language: form.language.trim(),
      boostedKeywords: splitList(form.boostedKeywords),
      ...(form.voice ? { voice: form.voice } : {}),
      endCallOnSilenceMinutes: Number(form.silence),
      maxCallDurationMinutes: Number(form.maxDuration),
    };
    unwrap(await api.POST('/v1/tenants/{clientId}/phone-numbers', { params: { path }, body }));
    f.setForm({ ...form, number: '' });
    list.reload();
  };
  const columns: ReadonlyArray<Column<PhoneNumber>> = [
    { header: 'Number', cell: (n) => n.spec.number },
    { header: 'Recipe', cell: (n) => n.spec.recipe },
    { header: 'Provider', cell: (n) => n.spec.provider.type },
    { header: 'Language', cell: (n) => n.spec.language },
    {
      header: 'Status',
      cell: (n, act) => {
        const toggle = (enabled: boolean) =>
          act(async () => {
            const updated = unwrap(await api.PATCH('/v1/tenants/{clientId}/phone-numbers/{id}', { params: { path: { clientId, id: n.id } }, body: { enabled } }));
            list.replace((x) => x.id === n.id, updated);
          });
        return <CheckField label={n.spec.enabled === false ? 'Disabled' : 'Enabled'} checked={n.spec.enabled !== false} onChange={(e) => toggle(e.target.checked)} aria-label={`Number ${n.spec.number} enabled`} />;
      },
    },
  ];

  return (
    <>
      <h1>Phone numbers</h1>
      <ResourceList
        caption="Phone numbers"
        noun="numbers"
        list={list}
        columns={columns}
        edit={{
          title: (n) => `Edit number ${n.spec.number}`,
          spec: (n) => n.spec,
          readOnly: ['enabled'],
          save: async (n, spec) => unwrap(await api.PUT('/v1/tenants/{clientId}/phone-numbers/{id}', { params: { path: { clientId, id: n.id } }, body: editedBody(spec) })),
        }}
      />
      <CreatePanel id="new-number" title="New phone number" submit="Add number" refused="The API refused the number" form={f} onCreate={create}>
        <TextField label="Phone number (E.164)" placeholder="+914440001001" {...f.text('number')} />
        <SelectField label="Recipe" {...f.text('recipe')} options={choices('— choose —', recipes.names)} />
        <SelectField label="Provider" {...f.text('provider', 'provider.type')} options={[['nativeStack', 'Native telephony stack'], ['customSipTrunk', 'Custom SIP trunk']]} />
        {form.provider === 'customSipTrunk' ? <SelectField label="SIP trunk" {...f.text('trunk', 'provider.trunk')} options={choices('— choose —', trunks.names)} /> : null}
        <TextField label="Language" {...f.text('language')} />
        <SelectField label="Voice (speech profile)" {...f.text('voice')} options={choices('— default —', voices.names)} />
        <TextField label="Boosted keywords (comma separated)" {...f.text('boostedKeywords')} />
        <TextField label="End call on silence (minutes, 1-5)" inputMode="numeric" {...f.text('silence', 'endCallOnSilenceMinutes')} />
        <TextField label="Max call duration (minutes, 5-30)" inputMode="numeric" {...f.text('maxDuration', 'maxCallDurationMinutes')} />
      </CreatePanel>
    </>
  );
}
