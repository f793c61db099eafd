import { useState, type FormEvent } from 'react';
import { ApiError, unwrap, type Schemas } from '../api/client';
import { MessageTracker } from '../campaign/message-tracker';
import { SendMessageSnippet } from '../campaign/send-snippet';
import { ErrorBox } from '../components/error-box';
import { useAttempt } from '../components/use-attempt';
import { CheckField, SelectField, TextField, issueAt } from '../components/field';
import { PageFooter, usePaged } from '../components/paged';
import { useNames } from '../components/use-options';
import { useSession } from '../session';

type CampaignSpec = Schemas['CampaignSpec'];
const scenarios = [['busy', 'Busy'], ['noAnswer', 'No answer'], ['failed', 'Failed']] as const;

const emptyForm = { name: '', phoneNumber: '', recipe: '', startLogic: 'immediately', waitSeconds: '2', ring: '30', retries: '0', interval: '30', dnd: 'reschedule' };
const defaultRetryOn = ['busy', 'noAnswer', 'failed'];

/** Outreach campaigns: settings, publish, the SendMessage snippet and a message tracker. */
export function CampaignsPage({ clientId }: { clientId: string }) {
  const { api } = useSession();
  const path = { clientId };
  const list = usePaged(async (cursor) => unwrap(await api.GET('/v1/tenants/{clientId}/campaigns', { params: { path, query: { limit: 50, ...(cursor ? { cursor } : {}) } } })), clientId);
  const numbers = useNames(clientId, 'phone-numbers');
  const recipes = useNames(clientId, 'recipes');
  const [form, setForm] = useState(emptyForm);
  const [retryOn, setRetryOn] = useState<Set<string>>(new Set(defaultRetryOn));
  const [selected, setSelected] = useState<string>();
  const [error, attempt] = useAttempt();
  const [rowError, attemptRow] = useAttempt();
  const issues = error instanceof ApiError ? (error.body.issues ?? []) : [];
  const set = (key: keyof typeof form) => (e: { target: { value: string } }) => setForm({ ...form, [key]: e.target.value });

  const create = async (event: FormEvent) => {
    event.preventDefault();
    const startLogic: CampaignSpec['startLogic'] =
      form.startLogic === 'waitSeconds' ? { mode: 'waitSeconds', seconds: Number(form.waitSeconds) } : { mode: form.startLogic as 'immediately' | 'waitForGreeting' };
    const body: CampaignSpec = {
      name: form.name.trim(),
      phoneNumber: form.phoneNumber,
      recipe: form.recipe,
      startLogic,
      dndBehaviour: form.dnd as 'reschedule' | 'discard',
      ringDurationSeconds: Number(form.ring),
      maxRetries: Number(form.retries),
      retryIntervalMinutes: Number(form.interval),
      retryScenarios: [...retryOn] as CampaignSpec['retryScenarios'],
    };
    await attempt(async () => {
      const created = unwrap(await api.POST('/v1/tenants/{clientId}/campaigns', { params: { path }, body }));
      setSelected(created.id);
      // A created campaign is in the list; the form is ready for the next one.
      setForm(emptyForm);
      setRetryOn(new Set(defaultRetryOn));
      list.reload();
    });
  };
  const publish = async (id: string, published: boolean) => {
    await attemptRow(async () => {
      const updated = unwrap(await api.PATCH('/v1/tenants/{clientId}/campaigns/{id}', { params: { path: { clientId, id } }, body: { published } }));
      list.replace((c) => c.id === id, updated);
    });
  };
  const chosen = list.items.find((c) => c.id === selected);

  return (
    <>
      <h1>Campaigns</h1>
      <ErrorBox error={rowError} title="Not changed" />
      <table>
        <caption className="sr-only">Campaigns</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Number</th>
            <th scope="col">Recipe</th>
            <th scope="col">Ring / retries</th>
            <th scope="col">Status</th>
            <th scope="col">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {list.items.map((c) => (
            <tr key={c.id}>
              <td>
                <button type="button" className="link" onClick={() => setSelected(c.id)} aria-pressed={selected === c.id}>
                  {c.spec.name}
                </button>
              </td>
              <td>{c.spec.phoneNumber as string}</td>
              <td>{c.spec.recipe as string}</td>
              <td>
                {c.spec.ringDurationSeconds} s / {c.spec.maxRetries}
              </td>
              <td>{c.spec.published ? <span className="badge done">Published</span> : <span className="badge">Draft</span>}</td>
              <td>
                <button type="button" className={c.spec.published ? '' : 'primary'} onClick={() => publish(c.id, !c.spec.published)} aria-label={`${c.spec.published ? 'Unpublish' : 'Publish'} ${c.spec.name}`}>
                  {c.spec.published ? 'Unpublish' : 'Publish'}
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <PageFooter list={list} noun="campaigns" />
      {chosen ? (
        <section className="panel" aria-labelledby="campaign-title">
          <h2 id="campaign-title">{chosen.spec.name}</h2>
          <p>
            Campaign ID <code data-testid="campaign-id">{chosen.id}</code> ({chosen.spec.published ? 'published: listening for SendMessage' : 'draft: publish it to accept SendMessage'})
          </p>
          <SendMessageSnippet clientId={clientId} campaignId={chosen.id} />
          <MessageTracker clientId={clientId} campaignId={chosen.id} />
        </section>
      ) : null}
      <form className="panel" onSubmit={create} aria-labelledby="new-campaign">
        <h2 id="new-campaign">New outreach campaign</h2>
        <div className="row wrap">
          <TextField label="Campaign name" value={form.name} onChange={set('name')} issue={issueAt(issues, 'name')} />
          <SelectField label="Voice integration (phone number)" value={form.phoneNumber} onChange={set('phoneNumber')} issue={issueAt(issues, 'phoneNumber')} options={[['', '— choose —'] as const, ...numbers.names.map((n) => [n, n] as const)]} />
          <SelectField label="Campaign recipe" value={form.recipe} onChange={set('recipe')} issue={issueAt(issues, 'recipe')} options={[['', '— choose —'] as const, ...recipes.names.map((n) => [n, n] as const)]} />
          <SelectField label="Start logic" value={form.startLogic} onChange={set('startLogic')} issue={issueAt(issues, 'startLogic')} options={[['immediately', 'Start immediately'], ['waitForGreeting', 'Wait for user greeting'], ['waitSeconds', 'Wait for X seconds']]} />
          {form.startLogic === 'waitSeconds' ? <TextField label="Seconds to wait (1-5)" inputMode="numeric" value={form.waitSeconds} onChange={set('waitSeconds')} issue={issueAt(issues, 'startLogic.seconds')} /> : null}
          <TextField label="Ring duration (15-30 s)" inputMode="numeric" value={form.ring} onChange={set('ring')} issue={issueAt(issues, 'ringDurationSeconds')} />
          <TextField label="Max retries (0-10)" inputMode="numeric" value={form.retries} onChange={set('retries')} issue={issueAt(issues, 'maxRetries')} />
          <TextField label="Retry interval (minutes)" inputMode="numeric" value={form.interval} onChange={set('interval')} issue={issueAt(issues, 'retryIntervalMinutes')} />
          <SelectField label="During DND hours" value={form.dnd} onChange={set('dnd')} options={[['reschedule', 'Reschedule after DND'], ['discard', 'Discard the call']]} issue={issueAt(issues, 'dndBehaviour')} />
        </div>
        <fieldset>
          <legend>Retry scenarios</legend>
          {scenarios.map(([value, label]) => (
            <CheckField
              key={value}
              label={label}
              checked={retryOn.has(value)}
              onChange={(e) => {
                const next = new Set(retryOn);
                if (e.target.checked) next.add(value);
                else next.delete(value);
                setRetryOn(next);
              }}
            />
          ))}
          {issueAt(issues, 'retryScenarios') ? <small className="issue">{issueAt(issues, 'retryScenarios')}</small> : null}
        </fieldset>
        <ErrorBox error={error} title="The API refused the campaign" />
        <button type="submit" className="primary">
          Create campaign
        </button>
      </form>
    </>
  );
}
