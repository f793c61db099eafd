import { Fragment, useState, type FormEvent } from 'react';
import { ApiError, unwrap, type Schemas } from '../api/client';
import { ErrorBox } from '../components/error-box';
import { useAttempt } from '../components/use-attempt';
import { CheckField, SelectField, TextField, issueAt } from '../components/field';
import { PageFooter, usePaged } from '../components/paged';
import { splitList, useNames } from '../components/use-options';
import { SpecEditor } from '../components/spec-editor';
import { useSession } from '../session';

type NumberSpec = Schemas['PhoneNumberSpec'];

/** Phone numbers: the list with each number's status toggle, and a form for a new one. */
export function NumbersPage({ clientId }: { clientId: string }) {
  const { api } = useSession();
  const path = { clientId };
  const list = usePaged(async (cursor) => unwrap(await api.GET('/v1/tenants/{clientId}/phone-numbers', { params: { path, query: { limit: 50, ...(cursor ? { cursor } : {}) } } })), clientId);
  const recipes = useNames(clientId, 'recipes');
  const trunks = useNames(clientId, 'sip-trunks');
  const voices = useNames(clientId, 'speech-profiles');
  const [form, setForm] = useState({ number: '', recipe: '', provider: 'nativeStack', trunk: '', language: 'en-IN', voice: '', boostedKeywords: '', silence: '2', maxDuration: '10' });
  const [error, attempt] = useAttempt();
  const [rowError, attemptRow] = useAttempt();
  const [editing, setEditing] = useState<string>();
  const issues = error instanceof ApiError ? (error.body.issues ?? []) : [];
  const set = (key: keyof typeof form) => (e: { target: { value: string } }) => setForm({ ...form, [key]: e.target.value });

  const create = async (event: FormEvent) => {
    event.preventDefault();
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
    await attempt(async () => {
      unwrap(await api.POST('/v1/tenants/{clientId}/phone-numbers', { params: { path }, body }));
      setForm({ ...form, number: '' });
      list.reload();
    });
  };
  const toggle = async (id: string, enabled: boolean) => {
    await attemptRow(async () => {
      const updated = unwrap(await api.PATCH('/v1/tenants/{clientId}/phone-numbers/{id}', { params: { path: { clientId, id } }, body: { enabled } }));
      list.replace((n) => n.id === id, updated);
    });
  };

  return (
    <>
      <h1>Phone numbers</h1>
      <ErrorBox error={rowError} />
      <table>
        <caption className="sr-only">Phone numbers</caption>
        <thead>
          <tr>
            <th scope="col">Number</th>
            <th scope="col">Recipe</th>
            <th scope="col">Provider</th>
            <th scope="col">Language</th>
            <th scope="col">Status</th>
            <th scope="col">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {list.items.map((n) => (
            <Fragment key={n.id}>
              <tr>
                <td data-label="Number">{n.spec.number as string}</td>
                <td data-label="Recipe">{n.spec.recipe as string}</td>
                <td data-label="Provider">{n.spec.provider.type}</td>
                <td data-label="Language">{n.spec.language}</td>
                <td data-label="Status">
                  <CheckField label={n.spec.enabled === false ? 'Disabled' : 'Enabled'} checked={n.spec.enabled !== false} onChange={(e) => toggle(n.id, e.target.checked)} aria-label={`Number ${String(n.spec.number)} enabled`} />
                </td>
                <td>
                  <button type="button" onClick={() => setEditing(editing === n.id ? undefined : n.id)} aria-expanded={editing === n.id} aria-label={`Edit number ${String(n.spec.number)}`}>
                    Edit
                  </button>
                </td>
              </tr>
              {editing === n.id ? (
                <tr>
                  <td colSpan={6}>
                    <SpecEditor
                      title={`Edit number ${String(n.spec.number)}`}
                      spec={n.spec as never}
                      readOnly={['enabled']}
                      onCancel={() => setEditing(undefined)}
                      onSave={async (spec) => {
                        const updated = unwrap(await api.PUT('/v1/tenants/{clientId}/phone-numbers/{id}', { params: { path: { clientId, id: n.id } }, body: spec as never }));
                        list.replace((x) => x.id === n.id, updated);
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
      <PageFooter list={list} noun="numbers" />
      <form className="panel" onSubmit={create} aria-labelledby="new-number">
        <h2 id="new-number">New phone number</h2>
        <div className="row wrap">
          <TextField label="Phone number (E.164)" placeholder="+914440001001" value={form.number} onChange={set('number')} issue={issueAt(issues, 'number')} />
          <SelectField label="Recipe" value={form.recipe} onChange={set('recipe')} issue={issueAt(issues, 'recipe')} options={[['', '— choose —'] as const, ...recipes.names.map((n) => [n, n] as const)]} />
          <SelectField label="Provider" value={form.provider} onChange={set('provider')} issue={issueAt(issues, 'provider.type')} options={[['nativeStack', 'Native telephony stack'], ['customSipTrunk', 'Custom SIP trunk']]} />
          {form.provider === 'customSipTrunk' ? (
            <SelectField label="SIP trunk" value={form.trunk} onChange={set('trunk')} issue={issueAt(issues, 'provider.trunk')} options={[['', '— choose —'] as const, ...trunks.names.map((n) => [n, n] as const)]} />
          ) : null}
          <TextField label="Language" value={form.language} onChange={set('language')} issue={issueAt(issues, 'language')} />
          <SelectField label="Voice (speech profile)" value={form.voice} onChange={set('voice')} issue={issueAt(issues, 'voice')} options={[['', '— default —'] as const, ...voices.names.map((n) => [n, n] as const)]} />
          <TextField label="Boosted keywords (comma separated)" value={form.boostedKeywords} onChange={set('boostedKeywords')} issue={issueAt(issues, 'boostedKeywords')} />
          <TextField label="End call on silence (minutes, 1-5)" inputMode="numeric" value={form.silence} onChange={set('silence')} issue={issueAt(issues, 'endCallOnSilenceMinutes')} />
          <TextField label="Max call duration (minutes, 5-30)" inputMode="numeric" value={form.maxDuration} onChange={set('maxDuration')} issue={issueAt(issues, 'maxCallDurationMinutes')} />
        </div>
        <ErrorBox error={error} title="The API refused the number" />
        <button type="submit" className="primary">
          Add number
        </button>
      </form>
    </>
  );
}
