import { useState, type FormEvent } from 'react';
import { ApiError, unwrap, type Schemas } from '../api/client';
import { ErrorBox } from '../components/error-box';
import { useAttempt } from '../components/use-attempt';
import { CheckField, SelectField, TextField, issueAt } from '../components/field';
import { PageFooter, usePaged } from '../components/paged';
import { splitList } from '../components/use-options';
import { useSession } from '../session';

type ProfileSpec = Schemas['SpeechProfileSpec'];
const providers: ReadonlyArray<ProfileSpec['provider']> = ['espeak-ng', 'google', 'azure', 'amazon-polly', 'elevenlabs', 'cartesia', 'deepgram', 'sarvam'];

/** Speech profiles: the API's filters (gender, language and accent, tags, favourites), stars, custom profiles. */
export function SpeechProfilesPage({ clientId }: { clientId: string }) {
  const { api } = useSession();
  const path = { clientId };
  const [filters, setFilters] = useState({ gender: 'all', language: '', tags: '', favourite: false });
  const query = {
    ...(filters.gender !== 'all' ? { gender: filters.gender } : {}),
    ...(filters.language.trim() ? { language: filters.language.trim() } : {}),
    ...(splitList(filters.tags).length ? { tags: splitList(filters.tags) } : {}),
    ...(filters.favourite ? { favourite: true } : {}),
  };
  const list = usePaged(
    async (cursor) => unwrap(await api.GET('/v1/tenants/{clientId}/speech-profiles', { params: { path, query: { limit: 50, ...query, ...(cursor ? { cursor } : {}) } as never } })),
    `${clientId}:${JSON.stringify(query)}`,
  );
  const [form, setForm] = useState({ name: '', language: 'en-IN', gender: 'female', provider: 'espeak-ng', voiceName: '', tags: '', description: '' });
  const [error, attempt] = useAttempt();
  const [rowError, attemptRow] = useAttempt();
  const issues = error instanceof ApiError ? (error.body.issues ?? []) : [];
  const set = (key: keyof typeof form) => (e: { target: { value: string } }) => setForm({ ...form, [key]: e.target.value });

  const star = async (id: string, favourite: boolean) => {
    await attemptRow(async () => {
      const updated = unwrap(await api.PATCH('/v1/tenants/{clientId}/speech-profiles/{id}', { params: { path: { clientId, id } }, body: { favourite } }));
      list.replace((p) => p.id === id, updated);
    });
  };
  const remove = async (id: string) => {
    await attemptRow(async () => {
      unwrap(await api.DELETE('/v1/tenants/{clientId}/speech-profiles/{id}', { params: { path: { clientId, id } } }));
      list.reload();
    });
  };
  const create = async (event: FormEvent) => {
    event.preventDefault();
    const body: ProfileSpec = {
      name: form.name.trim(),
      description: form.description,
      language: form.language.trim(),
      gender: form.gender as ProfileSpec['gender'],
      provider: form.provider as ProfileSpec['provider'],
      voiceName: form.voiceName.trim(),
      tags: splitList(form.tags),
    };
    await attempt(async () => {
      unwrap(await api.POST('/v1/tenants/{clientId}/speech-profiles', { params: { path }, body }));
      setForm({ ...form, name: '', voiceName: '' });
      list.reload();
    });
  };

  return (
    <>
      <h1>Speech profiles</h1>
      <form className="row wrap" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
        <SelectField label="Gender" value={filters.gender} onChange={(e) => setFilters({ ...filters, gender: e.target.value })} options={[['all', 'All'], ['female', 'Female'], ['male', 'Male']]} />
        <TextField label="Language and accent" placeholder="en, hi-IN" value={filters.language} onChange={(e) => setFilters({ ...filters, language: e.target.value })} />
        <TextField label="Tags (all of)" placeholder="Indian, Multi-lingual" value={filters.tags} onChange={(e) => setFilters({ ...filters, tags: e.target.value })} />
        <CheckField label="Favourites only" checked={filters.favourite} onChange={(e) => setFilters({ ...filters, favourite: e.target.checked })} />
      </form>
      <ErrorBox error={rowError} />
      <table>
        <caption className="sr-only">Speech profiles</caption>
        <thead>
          <tr>
            <th scope="col">Favourite</th>
            <th scope="col">Name</th>
            <th scope="col">Language</th>
            <th scope="col">Gender</th>
            <th scope="col">Provider / voice</th>
            <th scope="col">Tags</th>
            <th scope="col">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {list.items.map((p) => (
            <tr key={p.id}>
              <td>
                <button type="button" aria-pressed={p.spec.favourite === true} aria-label={`Favourite ${p.spec.name}`} onClick={() => star(p.id, p.spec.favourite !== true)}>
                  {p.spec.favourite ? '★' : '☆'}
                </button>
              </td>
              <td>
                {p.spec.name} {p.builtIn ? <span className="badge">built-in</span> : null}
              </td>
              <td>{p.spec.language}</td>
              <td>{p.spec.gender}</td>
              <td>
                {p.spec.provider} / {p.spec.voiceName}
              </td>
              <td>{(p.spec.tags as string[] | undefined)?.join(', ')}</td>
              <td>
                {p.builtIn ? null : (
                  <button type="button" className="danger" onClick={() => remove(p.id)} aria-label={`Delete ${p.spec.name}`}>
                    Delete
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <PageFooter list={list} noun="profiles" />
      <form className="panel" onSubmit={create} aria-labelledby="new-profile">
        <h2 id="new-profile">New speech profile</h2>
        <div className="row wrap">
          <TextField label="Speech name" value={form.name} onChange={set('name')} issue={issueAt(issues, 'name')} />
          <TextField label="Description" value={form.description} onChange={set('description')} issue={issueAt(issues, 'description')} />
          <TextField label="Language and accent" value={form.language} onChange={set('language')} issue={issueAt(issues, 'language')} />
          <SelectField label="Voice gender" value={form.gender} onChange={set('gender')} options={[['female', 'Female'], ['male', 'Male']]} issue={issueAt(issues, 'gender')} />
          <SelectField label="Provider" value={form.provider} onChange={set('provider')} options={providers.map((p) => [p, p] as const)} issue={issueAt(issues, 'provider')} />
          <TextField label="Voice name" value={form.voiceName} onChange={set('voiceName')} issue={issueAt(issues, 'voiceName')} />
          <TextField label="Tags (comma separated)" value={form.tags} onChange={set('tags')} issue={issueAt(issues, 'tags')} />
        </div>
        <ErrorBox error={error} title="The API refused the profile" />
        <button type="submit" className="primary">
          Add profile
        </button>
      </form>
    </>
  );
}
