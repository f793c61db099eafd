import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createLogger } from '../../core/logger.js';
import { CallRecorder } from '../../control-api/features/calls/call-recorder.js';
import { createPlatformAnalysisWorker } from '../../control-api/features/insights/analysis-runtime.js';
import type { AnalysisWorker } from '../../control-api/features/insights/analysis-worker.js';
import { recordInsightsTool } from '../../control-api/features/insights/llm-insight-extractor.js';
import { FakeChatCompletionsServer, type WireChatRequest } from '../fakes/fake-chat-completions.js';
import { secretKey, startManagementApp, type ManagementHarness } from '../helpers/management-app.js';
import { forEachStore } from '../helpers/stores.js';
import { eventually } from '../insights/insight-fixtures.js';
import { queueCallAnalysis } from '../../control-api/features/insights/queue-call-analysis.js';

/**
 * A tenant's `settings.llm` selects its model: the key is sealed at rest, masked on read and never
 * logged; simulations route with it and post-call analysis extracts with it (against the loopback
 * chat-completions fake). A tenant without the block keeps the offline engine.
 */
const apiKey = 'sk-live-tenant-llm-key-0123456789';

const recipe = {
  name: 'Visit',
  startBlockId: 'confirm',
  blocks: [
    {
      id: 'confirm',
      type: 'smartAi',
      settings: {
        prompt: 'Confirm the visit.\nOpening: Will you come tomorrow?\nReprompt: Please say yes or no.',
        retryLimit: 1,
        intents: [{ name: 'yes_visit', description: 'caller agrees to come' }],
      },
    },
    { id: 'done', type: 'close', settings: { closingScript: 'See you!', disposition: 'confirmed' } },
    { id: 'lost', type: 'close', settings: { closingScript: 'Goodbye.', disposition: 'unclear' } },
  ],
  connections: [
    { from: 'confirm', exit: 'yes_visit', to: 'done' },
    { from: 'confirm', exit: 'fallback', to: 'lost' },
  ],
};

/** The fake model: opens with its own line, and understands a phrase no keyword matcher would. */
const brain = (request: WireChatRequest) => {
  if (request.tools?.some((t) => t.function.name === recordInsightsTool)) {
    return { toolCalls: [{ name: recordInsightsTool, arguments: { will_visit: true } }] };
  }
  const last = request.messages[request.messages.length - 1]?.content ?? '';
  if (last.includes('purple elephant')) return { toolCalls: [{ name: 'route_turn', arguments: { intent: 'yes_visit' } }] };
  return { content: 'Hello from the model: will you visit us tomorrow?' };
};

forEachStore('tenant LLM settings (settings.llm)', (store) => {
  let h: ManagementHarness;
  let llm: FakeChatCompletionsServer;
  let worker: AnalysisWorker | undefined;
  const logLines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(chunk.toString('utf8'));
      done();
    },
  });

  before(async () => {
    llm = await new FakeChatCompletionsServer(brain).start();
    h = await startManagementApp(store(), {}, { logger: createLogger({ level: 'trace' }, sink) });
  });
  after(async () => {
    await worker?.stop();
    await h.close();
    await llm.stop();
  });

  const llmSettings = () => ({ provider: 'openaiCompatible', baseUrl: llm.baseUrl, model: 'tenant-model', apiKey, timeoutMs: 5_000, maxRetries: 0 });

  it('seals the key at rest, masks it on read, keeps it on a masked PUT and never logs it', async () => {
    const op = h.client();
    const created = await op.post('/v1/tenants', { clientId: 'smart', name: 'Smart', timezone: 'Asia/Kolkata', settings: { llm: llmSettings() } });
    assert.equal(created.status, 201, created.text);
    const settings = (created.body['spec'] as { settings: { llm: Record<string, unknown> } }).settings;
    assert.deepEqual(settings.llm, { provider: 'openaiCompatible', baseUrl: llm.baseUrl, model: 'tenant-model', apiKey: '********', timeoutMs: 5_000, maxRetries: 0 });
    const row = await store().db.selectFrom('tenants').select('settings').where('client_id', '=', 'smart').executeTakeFirstOrThrow();
    assert.ok(!JSON.stringify(row.settings).includes(apiKey), 'the stored settings hold the key sealed');
    const read = await op.get('/v1/tenants/smart');
    assert.ok(!read.text.includes(apiKey));
    // The document read back can be PUT as is: the mask keeps the stored key.
    const put = await op.put('/v1/tenants/smart', { name: 'Smart', timezone: 'Asia/Kolkata', settings: (read.body['spec'] as { settings: unknown }).settings });
    assert.equal(put.status, 200, put.text);
    assert.ok(!put.text.includes(apiKey));
    const started = await op.post('/v1/tenants/smart/recipes', recipe);
    assert.equal(started.status, 201, started.text);
    const sim = await op.post('/v1/tenants/smart/simulations', { recipe: 'Visit' });
    assert.equal(sim.status, 201, sim.text);
    assert.equal(llm.requests.at(-1)?.authorization, `Bearer ${apiKey}`, 'the opened key reaches the model');
    assert.ok(logLines.length > 0, 'the app logged its requests');
    assert.ok(!logLines.join('').includes(apiKey), 'the key is in no log line');
  });

  it('validates the block: http(s) base URL without credentials, model required, bounded numbers', async () => {
    const op = h.client();
    const tenant = (llm: Record<string, unknown>) => op.post('/v1/tenants', { clientId: 'badllm', name: 'Bad', settings: { llm } });
    const issues = async (llm: Record<string, unknown>) => {
      const res = await tenant(llm);
      assert.equal(res.status, 400, res.text);
      return (res.body['issues'] as Array<{ path: string }>).map((i) => i.path);
    };
    assert.deepEqual(await issues({ provider: 'openaiCompatible', baseUrl: 'ftp://127.0.0.1/v1', model: 'm' }), ['settings.llm.baseUrl']);
    assert.deepEqual(await issues({ provider: 'openaiCompatible', baseUrl: 'http://user:pw@127.0.0.1/v1', model: 'm' }), ['settings.llm.baseUrl']);
    assert.deepEqual(await issues({ provider: 'openaiCompatible', baseUrl: 'http://127.0.0.1/v1' }), ['settings.llm.model']);
    assert.deepEqual(await issues({ provider: 'openaiCompatible', baseUrl: 'http://127.0.0.1/v1', model: 'm', timeoutMs: 10 }), ['settings.llm.timeoutMs']);
    assert.deepEqual(await issues({ provider: 'gpt' }), ['settings.llm.provider']);
    assert.deepEqual(await issues({ provider: 'offline', surprise: 1 }), ['settings.llm.surprise']);
    const offline = await tenant({ provider: 'offline' });
    assert.equal(offline.status, 201, offline.text);
  });

  it("routes a simulation with the tenant's model; a tenant without settings.llm stays offline", async () => {
    const op = h.client();
    const sim = await op.post('/v1/tenants/smart/simulations', { recipe: 'Visit' });
    assert.deepEqual(sim.body['agent'], ['Hello from the model: will you visit us tomorrow?']);
    const before = llm.requests.length;
    const turn = await op.post(`/v1/tenants/smart/simulations/${String(sim.body['id'])}/turns`, 'purple elephant');
    assert.equal(turn.body['status'], 'ended', turn.text);
    assert.deepEqual(turn.body['agent'], ['See you!']);
    assert.equal((turn.body['end'] as { disposition: string }).disposition, 'confirmed', 'the model chose the intent');
    assert.equal(llm.requests.length, before + 1);
    assert.equal(llm.requests.at(-1)?.body.model, 'tenant-model');

    assert.equal((await op.post('/v1/tenants', { clientId: 'plain', name: 'Plain' })).status, 201);
    assert.equal((await op.post('/v1/tenants/plain/recipes', recipe)).status, 201);
    const count = llm.requests.length;
    const offline = await op.post('/v1/tenants/plain/simulations', { recipe: 'Visit' });
    assert.deepEqual(offline.body['agent'], ['Will you come tomorrow?'], 'the offline engine speaks the Opening line');
    const unclear = await op.post(`/v1/tenants/plain/simulations/${String(offline.body['id'])}/turns`, 'purple elephant');
    assert.notEqual((unclear.body['end'] as { disposition?: string } | undefined)?.disposition, 'confirmed');
    assert.equal(llm.requests.length, count, 'no request reached the model for the offline tenant');
  });

  it("extracts post-call insights with the tenant's model in the platform analysis worker", async () => {
    const db = store().db;
    const tenant = await db.selectFrom('tenants').select('id').where('client_id', '=', 'smart').executeTakeFirstOrThrow();
    const startedAt = new Date('2026-11-20T05:00:00Z');
    const call = await new CallRecorder({ db, onConversationEnded: queueCallAnalysis() }).recordCall({
      tenantId: tenant.id,
      direction: 'simulation',
      startedAt,
      endedAt: new Date(startedAt.getTime() + 30_000),
      outcome: 'completed',
      transcript: [
        { at: startedAt.getTime(), speaker: 'agent', text: 'Will you visit us tomorrow?' },
        { at: startedAt.getTime() + 2_000, speaker: 'caller', text: 'purple elephant' },
      ],
      insightParameters: [{ name: 'will_visit', description: 'Will the caller visit?', type: 'boolean' }],
    });
    worker = createPlatformAnalysisWorker({ db, logger: createLogger({ level: 'trace' }, sink), secretKey, pollMs: 50 });
    worker.start();
    const done = await eventually(async () => {
      const res = await h.client().get(`/v1/tenants/smart/calls/${call.id}`);
      return (res.body['analysis'] as { status: string }).status === 'completed' ? res : undefined;
    }, 15_000, 'the analysis');
    assert.deepEqual((done.body['analysis'] as { insights: unknown }).insights, { will_visit: true });
    const extraction = llm.requests.find((r) => r.body.tools?.some((t) => t.function.name === recordInsightsTool));
    assert.equal(extraction?.body.model, 'tenant-model');
    assert.equal(extraction?.authorization, `Bearer ${apiKey}`);
    assert.ok(!logLines.join('').includes(apiKey), 'the worker did not log the key either');
  });
});
