import { unwrap, type Schemas } from '../api/client';
import { CreatePanel, useCreateForm } from '../components/create-form';
import { CheckField, SelectField, TextField } from '../components/field';
import { usePaged } from '../components/paged';
import { ResourceList, type Column } from '../components/resource-list';
import { choices, useNames } from '../components/use-options';
import { useSession } from '../session';

type Entry = Schemas['PronunciationEntry'];

const columns: ReadonlyArray<Column<Entry>> = [
  { header: 'Word', cell: (w) => w.spec.word },
  { header: 'Pronunciation', cell: (w) => w.spec.pronunciation },
  { header: 'Case sensitive', cell: (w) => (w.spec.caseSensitive ? 'yes' : 'no') },
  { header: 'Speech profiles', cell: (w) => w.spec.speechProfiles.join(', ') || 'all' },
];

/** Word management: pronunciation entries, the profiles each applies to, add and delete. */
export function WordsPage({ clientId }: { clientId: string }) {
  const { api } = useSession();
  const path = { clientId };
  const list = usePaged(async (cursor) => unwrap(await api.GET('/v1/tenants/{clientId}/pronunciation-entries', { params: { path, query: { limit: 50, ...(cursor ? { cursor } : {}) } } })), clientId);
  const profiles = useNames(clientId, 'speech-profiles');
  const f = useCreateForm({ word: '', pronunciation: '', caseSensitive: false, profile: '' });
  const { form } = f;

  const create = async () => {
    const body = { word: form.word, pronunciation: form.pronunciation, caseSensitive: form.caseSensitive, speechProfiles: form.profile ? [form.profile] : [] };
    unwrap(await api.POST('/v1/tenants/{clientId}/pronunciation-entries', { params: { path }, body }));
    f.setForm({ ...form, word: '', pronunciation: '' });
    list.reload();
  };

  return (
    <>
      <h1>Word management</h1>
      <ResourceList
        caption="Pronunciation words"
        noun="words"
        list={list}
        columns={columns}
        remove={{
          label: (w) => `Delete word ${w.spec.word}`,
          run: async (w) => void unwrap(await api.DELETE('/v1/tenants/{clientId}/pronunciation-entries/{id}', { params: { path: { clientId, id: w.id } } })),
        }}
      />
      <CreatePanel id="new-word" title="New word" submit="Add word" refused="The API refused the word" form={f} onCreate={create}>
        <TextField label="Enter word" {...f.text('word')} />
        <TextField label="Enter phonetic pronunciation" {...f.text('pronunciation')} />
        <SelectField label="List of words (speech profile)" {...f.text('profile', 'speechProfiles')} options={choices('— every profile —', profiles.names)} />
        <CheckField label="Case sensitive" {...f.check('caseSensitive')} />
      </CreatePanel>
    </>
  );
}
