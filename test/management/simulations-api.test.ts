import assert from 'node:assert/strict';
import { forEachStore } from '../helpers/stores.js';
import { startManagementApp, type ManagementHarness } from '../helpers/management-app.js';

/** A stored recipe chatted with over the real control app: management auth, tenant scoping, turns. */
const reminder = {
  name: 'Reminder',
  startBlockId: 'greet',
  blocks: [
    { id: 'greet', type: 'message', settings: { text: 'Hello {{name}}.' } },
    {
      id: 'confirm',
      type: 'smartAi',
      settings: {
        prompt: 'Confirm the visit.\nOpening: Will you come tomorrow?\nReprompt: Please say yes or no.',
        retryLimit: 2,
        intents: [
          { name: 'yes_visit', description: 'caller says yes' },
          { name: 'no_visit', description: 'caller says no' },
        ],
      },
    },
    { id: 'done', type: 'close', settings: { closingScript: 'See you!', disposition: 'confirmed' } },
    { id: 'lost', type: 'close', settings: { disposition: 'unclear' } },
  ],
  connections: [
    { from: 'greet', exit: 'next', to: 'confirm' },
    { from: 'confirm', exit: 'yes_visit', to: 'done' },
    { from: 'confirm', exit: 'fallback', to: 'lost' },
  ],
};

forEachStore('simulations over the management API', (store) => {
  let h: ManagementHarness;
  let tenantToken = '';

  before(async () => {
    h = await startManagementApp(store());
    const op = h.client();
    assert.equal((await op.post('/v1/tenants', { clientId: 'clinic', name: 'Clinic', timezone: 'Asia/Kolkata' })).status, 201);
    assert.equal((await op.post('/v1/tenants', { clientId: 'rival', name: 'Rival', timezone: 'UTC' })).status, 201);
    const created = await op.post('/v1/tenants/clinic/recipes', reminder);
    assert.equal(created.status, 201, created.text);
    const issued = await op.post('/v1/tenants/clinic/tokens', { name: 'dashboard', scopes: ['management'] });
    tenantToken = String(issued.body['token']);
  });
  after(() => h.close());

  it('starts a simulation of a stored recipe and exchanges turns until it closes', async () => {
    const c = h.client(tenantToken);
    const started = await c.post('/v1/tenants/clinic/simulations', { recipe: 'Reminder', variables: { name: 'Asha' } });
    assert.equal(started.status, 201, started.text);
    assert.equal(started.body['status'], 'awaitingInput');
    assert.deepEqual(started.body['agent'], ['Hello Asha.', 'Will you come tomorrow?']);
    const id = String(started.body['id']);
    const unclear = await c.post(`/v1/tenants/clinic/simulations/${id}/turns`, 'what?');
    assert.equal(unclear.status, 200, unclear.text);
    assert.deepEqual(unclear.body['agent'], ['Please say yes or no.']);
    const yes = await c.post(`/v1/tenants/clinic/simulations/${id}/turns`, { say: 'yes' });
    assert.equal(yes.body['status'], 'ended');
    assert.deepEqual(yes.body['agent'], ['See you!']);
    assert.equal((yes.body['end'] as { disposition: string }).disposition, 'confirmed');
    const detail = await c.get(`/v1/tenants/clinic/simulations/${id}`);
    assert.equal(detail.status, 200);
    assert.deepEqual((detail.body['transcript'] as Array<{ speaker: string; text: string }>).map((t) => `${t.speaker}: ${t.text}`), [
      'agent: Hello Asha.',
      'agent: Will you come tomorrow?',
      'caller: what?',
      'agent: Please say yes or no.',
      'caller: yes',
      'agent: See you!',
    ]);
    assert.equal((await c.post(`/v1/tenants/clinic/simulations/${id}/turns`, 'again')).status, 412);
  });

  it('ends a simulation early with DELETE', async () => {
    const c = h.client();
    const started = await c.post('/v1/tenants/clinic/simulations', { recipe: 'Reminder' });
    const id = String(started.body['id']);
    assert.equal((await c.delete(`/v1/tenants/clinic/simulations/${id}`)).status, 204);
    assert.equal((await c.get(`/v1/tenants/clinic/simulations/${id}`)).status, 404);
  });

  it('uses the management auth and tenant scoping', async () => {
    const c = h.client(tenantToken);
    assert.equal((await h.client('not-a-token').post('/v1/tenants/clinic/simulations', { recipe: 'Reminder' })).status, 401);
    assert.equal((await c.post('/v1/tenants/rival/simulations', { recipe: 'Reminder' })).status, 404, 'another tenant is invisible');
    assert.equal((await c.post('/v1/tenants/clinic/simulations', { recipe: 'Nope' })).status, 404);
    const bad = await c.post('/v1/tenants/clinic/simulations', { recipe: 'Reminder', document: reminder });
    assert.equal(bad.status, 400);
    assert.equal(bad.body['code'], 'invalid_argument');
    const mine = await c.post('/v1/tenants/clinic/simulations', { recipe: 'Reminder' });
    const rival = await h.client().get(`/v1/tenants/rival/simulations/${String(mine.body['id'])}`);
    assert.equal(rival.status, 404, 'a session is only reachable under its own tenant');
    assert.equal((await c.request('POST', `/v1/tenants/clinic/simulations/${String(mine.body['id'])}/turns`, { body: { dtmf: 'x' } })).status, 400);
  });
});
