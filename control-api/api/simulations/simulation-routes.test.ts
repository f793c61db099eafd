import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Koa from 'koa';
import { silentLogger } from '../../../core/logger.js';
import { forEachStore } from '../../../test/helpers/stores.js';
import { jsonErrors } from '../../platform/http/error-response.js';
import { recipeDefinition } from '../../model/resources/definitions/recipe.js';
import { testBox } from '../../../test/helpers/resource-documents.js';
import { issueToken } from '../../model/tenants/api-tokens.js';
import { QuickJsCodeRunner } from '../../features/recipes/code-sandbox/quickjs-code-runner.js';
import { platformServices } from '../../features/recipes/platform-services.js';
import type { RecipeInput } from '../../model/recipes/recipe-schema.js';
import { mountSimulationRoutes } from './simulation-routes.js';
import { RecordingWebhooks } from '../../features/recipes/simulator/simulation-services.js';
import { SimulationSessions } from '../../features/recipes/simulator/simulation-sessions.js';

const reminder: RecipeInput = {
  name: 'Reminder',
  startBlockId: 'greet',
  blocks: [
    { id: 'greet', type: 'message', settings: { text: 'Hello {{name}}, it is {{current_time}} here.' } },
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

forEachStore('simulation routes (management API)', (store) => {
  let base = '';
  let tokenA = '';
  let tokenB = '';
  let server: ReturnType<Koa['listen']>;
  const sessions = new SimulationSessions({ turnTimeoutMs: 5_000 });
  const code = new QuickJsCodeRunner({ workers: 1 });

  before(async () => {
    const db = store().db;
    const box = testBox();
    const tenant = async (clientId: string, timezone: string) =>
      (await db.insertInto('tenants').values({ client_id: clientId, name: clientId, timezone }).returning('id').executeTakeFirstOrThrow()).id;
    const a = await tenant('acme', 'Asia/Kolkata');
    const b = await tenant('other', 'UTC');
    tokenA = (await issueToken(db, { tenantId: a, name: 't', scopes: ['management'] })).token;
    tokenB = (await issueToken(db, { tenantId: b, name: 't', scopes: ['management'] })).token;
    await recipeDefinition(box).repository.create(db, a, reminder as never);
    const router = new Router({ prefix: '/v1' });
    const services = platformServices({ db, box, code, logger: silentLogger, webhooks: new RecordingWebhooks() });
    mountSimulationRoutes(router, { db, operatorToken: 'operator-token-for-tests', bodyLimitBytes: 1_000_000, sessions, services: (t) => services(t.id) });
    const app = new Koa();
    app.use(jsonErrors(silentLogger));
    app.use(router.routes()).use(router.allowedMethods());
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/tenants`;
  });
  after(async () => {
    await sessions.closeAll();
    await code.close();
    await new Promise((resolve) => server.close(resolve));
  });

  const call = async (method: string, url: string, token: string, body?: unknown) => {
    const response = await fetch(`${base}${url}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await response.text();
    return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  };

  it('chats with a stored recipe turn by turn until the call closes', async () => {
    const started = await call('POST', '/acme/simulations', tokenA, { recipe: 'Reminder', variables: { name: 'Asha' } });
    assert.equal(started.status, 201, JSON.stringify(started.body));
    assert.equal(started.body.status, 'awaitingInput');
    assert.match(String((started.body.agent as string[])[0]), /^Hello Asha, it is \d\d:\d\d here\.$/);
    assert.equal((started.body.agent as string[])[1], 'Will you come tomorrow?');
    const id = String(started.body.id);
    const unclear = await call('POST', `/acme/simulations/${id}/turns`, tokenA, 'what?');
    assert.deepEqual(unclear.body.agent, ['Please say yes or no.']);
    const yes = await call('POST', `/acme/simulations/${id}/turns`, tokenA, { say: 'yes' });
    assert.equal(yes.body.status, 'ended');
    assert.deepEqual(yes.body.agent, ['See you!']);
    assert.equal((yes.body.end as { disposition: string }).disposition, 'confirmed');
    const detail = await call('GET', `/acme/simulations/${id}`, tokenA);
    assert.deepEqual((detail.body.transcript as { speaker: string }[]).map((t) => t.speaker), ['agent', 'agent', 'caller', 'agent', 'caller', 'agent']);
    assert.equal((await call('POST', `/acme/simulations/${id}/turns`, tokenA, 'again')).status, 412);
  });

  it('runs an unsaved recipe document and can be ended early', async () => {
    const started = await call('POST', '/acme/simulations', tokenA, { document: reminder });
    assert.equal(started.status, 201);
    const id = String(started.body.id);
    assert.equal((await call('DELETE', `/acme/simulations/${id}`, tokenA)).status, 204);
    assert.equal((await call('GET', `/acme/simulations/${id}`, tokenA)).status, 404);
  });

  it('refuses unknown fields in an unsaved recipe document at any depth, as POST /recipes does', async () => {
    const misspelt = { ...reminder, blocks: reminder.blocks.map((b) => (b.id === 'greet' ? { ...b, settings: { text: 'Hello', txt: 'Hello' } } : b)), colour: 'blue' };
    const refused = await call('POST', '/acme/simulations', tokenA, { document: misspelt });
    assert.equal(refused.status, 400, JSON.stringify(refused.body));
    assert.equal(refused.body.code, 'invalid_argument');
    assert.match(String(refused.body.message), /^invalid recipe document: /);
    const paths = (refused.body.issues as { path: string; message: string }[]).map((i) => i.path).sort();
    assert.deepEqual(paths, ['document.blocks[0].settings.txt', 'document.colour']);
    assert.equal((await call('POST', '/acme/simulations', tokenA, { document: reminder })).status, 201, 'the same document without them runs');
  });

  it('answers precise errors: bad body 400, unknown recipe 404, other tenant 404, no token 401', async () => {
    const bad = await call('POST', '/acme/simulations', tokenA, { recipe: 'Reminder', document: reminder });
    assert.equal(bad.status, 400);
    const invalidDoc = await call('POST', '/acme/simulations', tokenA, { document: { ...reminder, connections: [] } });
    assert.equal(invalidDoc.status, 400);
    assert.match(String(invalidDoc.body.msg ?? invalidDoc.body.message ?? JSON.stringify(invalidDoc.body)), /document/);
    assert.equal((await call('POST', '/acme/simulations', tokenA, { recipe: 'Nope' })).status, 404);
    const mine = await call('POST', '/acme/simulations', tokenA, { recipe: 'Reminder' });
    assert.equal((await call('GET', `/other/simulations/${String(mine.body.id)}`, tokenB)).status, 404, 'another tenant cannot see it');
    assert.equal((await call('GET', `/acme/simulations/${String(mine.body.id)}`, tokenB)).status, 404, 'nor reach the tenant');
    assert.equal((await call('GET', `/acme/simulations/${String(mine.body.id)}`, 'wrong')).status, 401);
    assert.equal((await call('POST', `/acme/simulations/${String(mine.body.id)}/turns`, tokenA, { dtmf: 'x' })).status, 400);
  });
});
