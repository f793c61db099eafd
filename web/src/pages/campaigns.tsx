import { useState } from 'react';
import { unwrap, type Schemas } from '../api/client';
import { MessageTracker } from '../campaign/message-tracker';
import { SendMessageSnippet } from '../campaign/send-snippet';
import { CreatePanel, useCreateForm } from '../components/create-form';
import { CheckSet, SelectField, TextField, issueAt } from '../components/field';
import { usePaged } from '../components/paged';
import { ResourceList, type Column } from '../components/resource-list';
import { choices, useNames } from '../components/use-options';
import { useSession } from '../session';

type CampaignSpec = Schemas['CampaignSpec'];
type Campaign = Schemas['Campaign'];
type Scenario = NonNullable<CampaignSpec['retryScenarios']>[number];
const scenarios: ReadonlyArray<readonly [Scenario, string]> = [['busy', 'Busy'], ['noAnswer', 'No answer'], ['failed', 'Failed']];

const emptyForm = { name: '', phoneNumber: '', recipe: '', startLogic: 'immediately', waitSeconds: '2', ring: '30', retries: '0', interval: '30', dnd: 'reschedule' };
const defaultRetryOn: Scenario[] = ['busy', 'noAnswer', 'failed'];

/** Outreach campaigns: settings, publish, the SendMessage snippet and a message tracker. */
export function CampaignsPage({ clientId }: { clientId: string }) {
  const { api } = useSession();
  const path = { clientId };
  const list = usePaged(async (cursor) => unwrap(await api.GET('/v1/tenants/{clientId}/campaigns', { params: { path, query: { limit: 50, ...(cursor ? { cursor } : {}) } } })), clientId);
  const numbers = useNames(clientId, 'phone-numbers');
  const recipes = useNames(clientId, 'recipes');
  const f = useCreateForm(emptyForm);
  const { form } = f;
  const [retryOn, setRetryOn] = useState<Set<Scenario>>(new Set(defaultRetryOn));
  const [selected, setSelected] = useState<string>();

  const create = async () => {
    const startLogic: CampaignSpec['startLogic'] =
      form.startLogic === 'waitSeconds' ? { mode: 'waitSeconds', seconds: Number(form.waitSeconds) } : { mode: form.startLogic === 'waitForGreeting' ? 'waitForGreeting' : 'immediately' };
    const body: CampaignSpec = {
      name: form.name.trim(),
      phoneNumber: form.phoneNumber,
      recipe: form.recipe,
      startLogic,
      dndBehaviour: form.dnd === 'discard' ? 'discard' : 'reschedule',
      ringDurationSeconds: Number(form.ring),
      maxRetries: Number(form.retries),
      retryIntervalMinutes: Number(form.interval),
      retryScenarios: [...retryOn],
    };
    const created = unwrap(await api.POST('/v1/tenants/{clientId}/campaigns', { params: { path }, body }));
    setSelected(created.id);
    // A created campaign is in the list; the form is ready for the next one.
    f.setForm(emptyForm);
    setRetryOn(new Set(defaultRetryOn));
    list.reload();
  };
  const columns: ReadonlyArray<Column<Campaign>> = [
    {
      header: 'Name',
      cell: (c) => (
        <button type="button" className="link" onClick={() => setSelected(c.id)} aria-pressed={selected === c.id}>
          {c.spec.name}
        </button>
      ),
    },
    { header: 'Number', cell: (c) => c.spec.phoneNumber },
    { header: 'Recipe', cell: (c) => c.spec.recipe },
    { header: 'Ring / retries', cell: (c) => `${c.spec.ringDurationSeconds} s / ${c.spec.maxRetries}` },
    { header: 'Status', cell: (c) => (c.spec.published ? <span className="badge done">Published</span> : <span className="badge">Draft</span>) },
  ];
  const chosen = list.items.find((c) => c.id === selected);

  return (
    <>
      <h1>Campaigns</h1>
      <ResourceList
        caption="Campaigns"
        noun="campaigns"
        list={list}
        columns={columns}
        actionError="Not changed"
        actions={(c, act) => {
          const publish = () =>
            act(async () => {
              const updated = unwrap(await api.PATCH('/v1/tenants/{clientId}/campaigns/{id}', { params: { path: { clientId, id: c.id } }, body: { published: !c.spec.published } }));
              list.replace((x) => x.id === c.id, updated);
            });
          return (
            <button type="button" className={c.spec.published ? '' : 'primary'} onClick={publish} aria-label={`${c.spec.published ? 'Unpublish' : 'Publish'} ${c.spec.name}`}>
              {c.spec.published ? 'Unpublish' : 'Publish'}
            </button>
          );
        }}
      />
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
      <CreatePanel
        id="new-campaign"
        title="New outreach campaign"
        submit="Create campaign"
        refused="The API refused the campaign"
        form={f}
        onCreate={create}
        after={<CheckSet legend="Retry scenarios" options={scenarios} chosen={retryOn} onChange={setRetryOn} issue={issueAt(f.issues, 'retryScenarios')} />}
      >
        <TextField label="Campaign name" {...f.text('name')} />
        <SelectField label="Voice integration (phone number)" {...f.text('phoneNumber')} options={choices('— choose —', numbers.names)} />
        <SelectField label="Campaign recipe" {...f.text('recipe')} options={choices('— choose —', recipes.names)} />
        <SelectField label="Start logic" {...f.text('startLogic')} options={[['immediately', 'Start immediately'], ['waitForGreeting', 'Wait for user greeting'], ['waitSeconds', 'Wait for X seconds']]} />
        {form.startLogic === 'waitSeconds' ? <TextField label="Seconds to wait (1-5)" inputMode="numeric" {...f.text('waitSeconds', 'startLogic.seconds')} /> : null}
        <TextField label="Ring duration (15-30 s)" inputMode="numeric" {...f.text('ring', 'ringDurationSeconds')} />
        <TextField label="Max retries (0-10)" inputMode="numeric" {...f.text('retries', 'maxRetries')} />
        <TextField label="Retry interval (minutes)" inputMode="numeric" {...f.text('interval', 'retryIntervalMinutes')} />
        <SelectField label="During DND hours" {...f.text('dnd', 'dndBehaviour')} options={[['reschedule', 'Reschedule after DND'], ['discard', 'Discard the call']]} />
      </CreatePanel>
    </>
  );
}
