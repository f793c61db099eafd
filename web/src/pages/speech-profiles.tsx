import { useState } from 'react';
import { unwrap, type Schemas } from '../api/client';
import { CreatePanel, useCreateForm } from '../components/create-form';
import { CheckField, SelectField, TextField } from '../components/field';
import { usePaged } from '../components/paged';
import { ResourceList, type Column } from '../components/resource-list';
import { splitList } from '../components/use-options';
import { useSession } from '../session';

type ProfileSpec = Schemas['SpeechProfileSpec'];
type Profile = Schemas['SpeechProfile'];
const genders = ['all', 'female', 'male'] as const;
const providers: ReadonlyArray<ProfileSpec['provider']> = ['espeak-ng', 'google', 'azure', 'amazon-polly', 'elevenlabs', 'cartesia', 'deepgram', 'sarvam'];

/** Speech profiles: the API's filters (gender, language and accent, tags, favourites), stars, custom profiles. */
export function SpeechProfilesPage({ clientId }: { clientId: string }) {
  const { api } = useSession();
  const path = { clientId };
  const [filters, setFilters] = useState({ gender: 'all', language: '', tags: '', favourite: false });
  const gender = genders.find((g) => g === filters.gender);
  const query = {
    ...(gender && gender !== 'all' ? { gender } : {}),
    ...(filters.language.trim() ? { language: filters.language.trim() } : {}),
    ...(splitList(filters.tags).length ? { tags: splitList(filters.tags) } : {}),
    ...(filters.favourite ? { favourite: true } : {}),
  };
  const list = usePaged(
    async (cursor) => unwrap(await api.GET('/v1/tenants/{clientId}/speech-profiles', { params: { path, query: { limit: 50, ...query, ...(cursor ? { cursor } : {}) } } })),
    `${clientId}:${JSON.stringify(query)}`,
  );
  const f = useCreateForm({ name: '', language: 'en-IN', gender: 'female', provider: 'espeak-ng', voiceName: '', tags: '', description: '' });
  const { form } = f;

  const create = async () => {
    const body: ProfileSpec = {
      name: form.name.trim(),
      description: form.description,
      language: form.language.trim(),
      gender: form.gender === 'male' ? 'male' : 'female',
      provider: providers.find((p) => p === form.provider) ?? 'espeak-ng',
      voiceName: form.voiceName.trim(),
      tags: splitList(form.tags),
    };
    unwrap(await api.POST('/v1/tenants/{clientId}/speech-profiles', { params: { path }, body }));
    f.setForm({ ...form, name: '', voiceName: '' });
    list.reload();
  };
  const columns: ReadonlyArray<Column<Profile>> = [
    {
      header: 'Favourite',
      cell: (p, act) => {
        const star = () =>
          act(async () => {
            const updated = unwrap(await api.PATCH('/v1/tenants/{clientId}/speech-profiles/{id}', { params: { path: { clientId, id: p.id } }, body: { favourite: p.spec.favourite !== true } }));
            list.replace((x) => x.id === p.id, updated);
          });
        return (
          <button type="button" aria-pressed={p.spec.favourite === true} aria-label={`Favourite ${p.spec.name}`} onClick={star}>
            {p.spec.favourite ? '★' : '☆'}
          </button>
        );
      },
    },
    {
      header: 'Name',
      cell: (p) => (
        <>
          {p.spec.name} {p.builtIn ? <span className="badge">built-in</span> : null}
        </>
      ),
    },
    { header: 'Language', cell: (p) => p.spec.language },
    { header: 'Gender', cell: (p) => p.spec.gender },
    { header: 'Provider / voice', cell: (p) => `${p.spec.provider} / ${p.spec.voiceName}` },
    { header: 'Tags', cell: (p) => p.spec.tags.join(', ') },
  ];

  return (
    <>
      <h1>Speech profiles</h1>
      <form className="row wrap" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
        <SelectField label="Gender" value={filters.gender} onChange={(e) => setFilters({ ...filters, gender: e.target.value })} options={[['all', 'All'], ['female', 'Female'], ['male', 'Male']]} />
        <TextField label="Language and accent" placeholder="en, hi-IN" value={filters.language} onChange={(e) => setFilters({ ...filters, language: e.target.value })} />
        <TextField label="Tags (all of)" placeholder="Indian, Multi-lingual" value={filters.tags} onChange={(e) => setFilters({ ...filters, tags: e.target.value })} />
        <CheckField label="Favourites only" checked={filters.favourite} onChange={(e) => setFilters({ ...filters, favourite: e.target.checked })} />
      </form>
      <ResourceList
        caption="Speech profiles"
        noun="profiles"
        list={list}
        columns={columns}
        remove={{
          label: (p) => `Delete ${p.spec.name}`,
          when: (p) => !p.builtIn,
          run: async (p) => void unwrap(await api.DELETE('/v1/tenants/{clientId}/speech-profiles/{id}', { params: { path: { clientId, id: p.id } } })),
        }}
      />
      <CreatePanel id="new-profile" title="New speech profile" submit="Add profile" refused="The API refused the profile" form={f} onCreate={create}>
        <TextField label="Speech name" {...f.text('name')} />
        <TextField label="Description" {...f.text('description')} />
        <TextField label="Language and accent" {...f.text('language')} />
        <SelectField label="Voice gender" {...f.text('gender')} options={[['female', 'Female'], ['male', 'Male']]} />
        <SelectField label="Provider" {...f.text('provider')} options={providers.map((p) => [p, p] as const)} />
        <TextField label="Voice name" {...f.text('voiceName')} />
        <TextField label="Tags (comma separated)" {...f.text('tags')} />
      </CreatePanel>
    </>
  );
}
