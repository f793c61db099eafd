import { useState, type FormEvent } from 'react';
import { ApiError, unwrap } from '../api/client';
import { ErrorBox } from '../components/error-box';
import { useAttempt } from '../components/use-attempt';
import { CheckField, SelectField, TextField, issueAt } from '../components/field';
import { PageFooter, usePaged } from '../components/paged';
import { useNames } from '../components/use-options';
import { useSession } from '../session';

/** Word management: pronunciation entries, the profiles each applies to, add and delete. */
export function WordsPage({ clientId }: { clientId: string }) {
  const { api } = useSession();
  const path = { clientId };
  const list = usePaged(async (cursor) => unwrap(await api.GET('/v1/tenants/{clientId}/pronunciation-entries', { params: { path, query: { limit: 50, ...(cursor ? { cursor } : {}) } } })), clientId);
  const profiles = useNames(clientId, 'speech-profiles');
  const [form, setForm] = useState({ word: '', pronunciation: '', caseSensitive: false, profile: '' });
  const [error, attempt] = useAttempt();
  const [rowError, attemptRow] = useAttempt();
  const issues = error instanceof ApiError ? (error.body.issues ?? []) : [];

  const create = async (event: FormEvent) => {
    event.preventDefault();
    await attempt(async () => {
      const body = { word: form.word, pronunciation: form.pronunciation, caseSensitive: form.caseSensitive, speechProfiles: form.profile ? [form.profile] : [] };
      unwrap(await api.POST('/v1/tenants/{clientId}/pronunciation-entries', { params: { path }, body }));
      setForm({ ...form, word: '', pronunciation: '' });
      list.reload();
    });
  };
  const remove = async (id: string) => {
    await attemptRow(async () => {
      unwrap(await api.DELETE('/v1/tenants/{clientId}/pronunciation-entries/{id}', { params: { path: { clientId, id } } }));
      list.reload();
    });
  };

  return (
    <>
      <h1>Word management</h1>
      <ErrorBox error={rowError} />
      <table>
        <caption className="sr-only">Pronunciation words</caption>
        <thead>
          <tr>
            <th scope="col">Word</th>
            <th scope="col">Pronunciation</th>
            <th scope="col">Case sensitive</th>
            <th scope="col">Speech profiles</th>
            <th scope="col">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {list.items.map((w) => (
            <tr key={w.id}>
              <td>{w.spec.word}</td>
              <td>{w.spec.pronunciation}</td>
              <td>{w.spec.caseSensitive ? 'yes' : 'no'}</td>
              <td>{(w.spec.speechProfiles as string[] | undefined)?.join(', ') || 'all'}</td>
              <td>
                <button type="button" className="danger" onClick={() => remove(w.id)} aria-label={`Delete word ${w.spec.word}`}>
                  Delete
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <PageFooter list={list} noun="words" />
      <form className="panel" onSubmit={create} aria-labelledby="new-word">
        <h2 id="new-word">New word</h2>
        <div className="row wrap">
          <TextField label="Enter word" value={form.word} onChange={(e) => setForm({ ...form, word: e.target.value })} issue={issueAt(issues, 'word')} />
          <TextField label="Enter phonetic pronunciation" value={form.pronunciation} onChange={(e) => setForm({ ...form, pronunciation: e.target.value })} issue={issueAt(issues, 'pronunciation')} />
          <SelectField label="List of words (speech profile)" value={form.profile} onChange={(e) => setForm({ ...form, profile: e.target.value })} issue={issueAt(issues, 'speechProfiles')} options={[['', '— every profile —'] as const, ...profiles.names.map((n) => [n, n] as const)]} />
          <CheckField label="Case sensitive" checked={form.caseSensitive} onChange={(e) => setForm({ ...form, caseSensitive: e.target.checked })} />
        </div>
        <ErrorBox error={error} title="The API refused the word" />
        <button type="submit" className="primary">
          Add word
        </button>
      </form>
    </>
  );
}
