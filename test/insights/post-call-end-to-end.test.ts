import assert from 'node:assert/strict';
import { parse } from 'csv-parse/sync';
import { silentLogger } from '../../core/logger.js';
import { CallRecorder } from '../../control-api/features/calls/call-recorder.js';
import { callEndFromRun } from '../../control-api/features/calls/run-record.js';
import { AnalysisWorker } from '../../control-api/features/insights/analysis-worker.js';
import { LlmInsightExtractor, recordInsightsTool } from '../../control-api/features/insights/llm-insight-extractor.js';
import { OfflineEngine } from '../../control-api/platform/llm/offline-engine.js';
import { OpenAiCompatibleProvider } from '../../control-api/platform/llm/openai-compatible.js';
import { SafeHttp } from '../../control-api/platform/net/safe-http.js';
import { defaultBlocks } from '../../control-api/features/recipes/blocks/index.js';
import { recipeSchema } from '../../control-api/model/recipes/recipe-schema.js';
import { RecipeRun } from '../../control-api/features/recipes/runtime/recipe-run.js';
import type { RuntimeServices } from '../../control-api/features/recipes/runtime/services.js';
import { TextConversation, scriptedTurns } from '../../control-api/features/recipes/runtime/text-conversation.js';
import type { SayOptions, SayResult } from '../../core/ports/conversation.js';
import { verifySignature } from '../../control-api/platform/webhooks/signing.js';
import { FakeChatCompletionsServer, type WireChatRequest } from '../fakes/fake-chat-completions.js';
import { operatorToken, startManagementApp, type ManagementHarness } from '../helpers/management-app.js';
import { forEachStore } from '../helpers/stores.js';
import { WebhookReceiver, createTenant, eventually, loanRecipe, provision, tenantsRepository, webhookSecret } from './insight-fixtures.js';
import { queueCallAnalysis } from '../../control-api/features/insights/queue-call-analysis.js';

/** The first agent line is cut short by the caller, as Smart Interruption reports it. */
class InterruptedOnce extends TextConversation {
  private cut = false;
  override async say(text: string, options: SayOptions): Promise<SayResult> {
    await super.say(text, options);
    if (this.cut) return { interrupted: false };
    this.cut = true;
    return { interrupted: true, unspoken: 'about your loan payment.' };
  }
}

const summary = 'Caller "Ravi" agreed to pay ₹2,500, on Friday.\nनमस्ते, शुक्रिया — شكرا جزيلا';

forEachStore('post-call analysis end to end: simulated call -> analyzing -> LLM -> completed -> webhook -> report', (getStore) => {
  let llm: FakeChatCompletionsServer;
  let receiver: WebhookReceiver;
  let app: ManagementHarness;
  let worker: AnalysisWorker | undefined;

  before(async () => {
    llm = await new FakeChatCompletionsServer().start();
    receiver = await new WebhookReceiver().start();
    app = await startManagementApp(getStore());
  });
  after(async () => {
    await worker?.stop();
    await app.close();
    await receiver.stop();
    await llm.stop();
  });

  it('records the call, extracts every parameter, delivers the signed analysis_success webhook and reports the values', async function () {
    this.timeout(30_000);
    const store = getStore();
    const tenantId = await createTenant(store, 'acme', receiver.url);
    const { recipeId, numberId, campaignId } = await provision(store, tenantId, '+918000000001');
    const recorder = new CallRecorder({ db: store.db, onConversationEnded: queueCallAnalysis(), onAnalysisQueued: () => worker?.nudge() });

    // 1. A simulated outbound campaign call runs the stored recipe over the text channel.
    const startedAt = new Date(Date.UTC(2026, 10, 20, 5, 0, 0));
    const messageId = '3f0c8c1e-6d1a-4f7e-9a57-2b8e9d2f4c10';
    const callId = await recorder.startCall({
      tenantId,
      direction: 'simulation',
      startedAt,
      phoneNumberId: numberId,
      phoneNumber: '+918000000001',
      remoteNumber: '+919812345678',
      campaignId,
      messageId,
      recipeId,
      language: 'hi-IN',
      variables: { name: 'Ravi' },
    });
    let clock = startedAt.getTime();
    const services: RuntimeServices = {
      engine: new OfflineEngine(),
      http: { request: async () => ({ status: 200, headers: {}, body: '{}' }) },
      code: { run: async () => ({ ok: false, kind: 'runtime', error: 'unused' }) },
      webhooks: { send: async () => 200 },
      logger: silentLogger,
      silenceTimeoutMs: 100,
    };
    const conversation = new InterruptedOnce({
      nextTurn: scriptedTurns([
        { kind: 'utterance', text: 'haan ji, yes I will pay' },
        { kind: 'utterance', text: 'I can pay 2500 rupees' },
      ]),
    });
    const run = new RecipeRun({
      recipe: recipeSchema.parse(loanRecipe()),
      conversation,
      context: { callId, tenantId, timezone: 'Asia/Kolkata', direction: 'simulation', campaignVariables: { name: 'Ravi' }, now: () => (clock += 1000) },
      services,
      blocks: defaultBlocks,
    });
    const result = await run.run();
    assert.equal(result.reason, 'closed');
    const endedAt = new Date(clock);
    const ended = await recorder.completeCall(callId, callEndFromRun(result, { endedAt }));

    // 2. Right after hang-up the analysis state is `analyzing`, through the API too.
    assert.equal(ended.analysis.status, 'analyzing');
    assert.equal(ended.disposition, 'promise_to_pay');
    const client = app.client();
    const analyzing = await client.request('GET', `/v1/tenants/acme/calls/${callId}`, { unchecked: true });
    assert.equal(analyzing.status, 200);
    assert.equal((analyzing.body.analysis as { status: string }).status, 'analyzing');

    // 3. The worker extracts through the chat-completions adapter against the loopback server.
    llm.setBrain((request: WireChatRequest) => ({
      toolCalls: [
        {
          name: recordInsightsTool,
          // Form the validator has to fix ("PROMISE_TO_PAY", "2,500"), as models do.
          arguments: { agreed_to_pay: true, amount: '2,500', payment_date: '2026-11-27', status: 'PROMISE_TO_PAY', summary: request.messages.length > 0 ? summary : '' },
        },
      ],
    }));
    receiver.answer(503); // the first delivery fails; the retry must carry the same event
    worker = new AnalysisWorker({
      db: store.db,
      logger: silentLogger,
      extractor: new LlmInsightExtractor(new OpenAiCompatibleProvider({ baseUrl: llm.baseUrl, model: 'insights-test', apiKey: 'sk-test', retryBaseMs: 5 })),
      http: new SafeHttp({ allowlist: () => ['127.0.0.1'] }),
      tenantWebhook: async (id) => {
        const s = await tenantsRepository().settingsWithSecrets(store.db, id);
        return { url: s?.webhookUrl, secret: s?.webhookSecret };
      },
      pollMs: 50,
      deliverBackoffMs: () => 100,
    });
    worker.start();
    const delivered = await eventually(() => receiver.received.find((r) => r.status === 200), 15_000, 'the analysis_success webhook');

    // 4. The LLM request used a forced function call whose schema has every parameter.
    const sent = llm.requests[0]?.body;
    assert.ok(sent);
    assert.deepEqual(sent.tool_choice, { type: 'function', function: { name: recordInsightsTool } });
    const schema = sent.tools?.[0]?.function.parameters as { required: string[]; properties: Record<string, { type: string[]; enum?: unknown[] }> };
    assert.deepEqual(schema.required, ['agreed_to_pay', 'amount', 'payment_date', 'status', 'summary']);
    assert.deepEqual(schema.properties.status?.enum, ['paid', 'promise_to_pay', 'dispute', null]);
    const transcriptSent = sent.messages[1]?.content ?? '';
    assert.match(transcriptSent, /Agent: Namaste Ravi, this is Acme Finance about your loan payment\. \[Interrupted; not spoken: "about your loan payment\."\]/);
    assert.match(transcriptSent, /Caller: I can pay 2500 rupees/);

    // 5. The webhook: signed, retried after the 503 with the same bytes, exact payload shape.
    assert.equal(receiver.received.length, 2);
    assert.equal(receiver.received[0]?.body, delivered.body);
    const signature = delivered.headers['x-vap-signature'];
    assert.equal(typeof signature, 'string');
    assert.deepEqual(verifySignature(webhookSecret, signature as string, delivered.body), { ok: true });
    assert.deepEqual(verifySignature('another-secret-0123456789', signature as string, delivered.body), { ok: false, reason: 'mismatch' });
    assert.equal(delivered.headers['content-type'], 'application/json');
    const payload = JSON.parse(delivered.body) as Record<string, unknown> & { room: { analysis: { completed_at: string } }; event_id: string };
    assert.deepEqual(payload, {
      trigger_type: 'analysis_success',
      channel: 'voice',
      event_id: payload.event_id,
      call_id: callId,
      message_id: messageId,
      campaign_id: campaignId,
      phone_number: '+919812345678',
      agent_phone_number: '+918000000001',
      direction: 'simulation',
      call: {
        started_at: startedAt.toISOString(),
        ended_at: endedAt.toISOString(),
        duration_seconds: Math.round((endedAt.getTime() - startedAt.getTime()) / 1000),
        outcome: 'completed',
        disposition: 'promise_to_pay',
      },
      room: {
        id: callId,
        analysis: {
          status: 'completed',
          completed_at: payload.room.analysis.completed_at,
          user_defined: { agreed_to_pay: 'true', amount: '2500', payment_date: '2026-11-27', status: 'promise_to_pay', summary },
        },
      },
    });
    assert.match(payload.event_id, /^[0-9a-f-]{36}$/);

    // 6. The call through the API: completed, typed insights, transcript with the Interrupted tag.
    // The delivery's outcome is recorded after the receiver answered: wait for it, do not race it.
    type CallBody = { analysis: { webhook: { state: string } } };
    const done = await eventually(async () => {
      const read = await client.request('GET', `/v1/tenants/acme/calls/${callId}`, { unchecked: true });
      return (read.body as unknown as CallBody).analysis.webhook.state === 'done' ? read : undefined;
    }, 15_000, 'the delivery recorded as done');
    const body = done.body as unknown as {
      analysis: { status: string; insights: Record<string, unknown>; webhook: { state: string; attempts: number; lastStatus: number } };
      transcript: Array<{ speaker: string; text: string; tags?: string[]; unspoken?: string }>;
      messageId: string;
      variables: Record<string, unknown>;
    };
    assert.equal(body.analysis.status, 'completed');
    assert.deepEqual(body.analysis.insights, { agreed_to_pay: true, amount: 2500, payment_date: '2026-11-27', status: 'promise_to_pay', summary });
    assert.deepEqual(body.analysis.webhook, { ...body.analysis.webhook, state: 'done', attempts: 2, lastStatus: 200 });
    assert.equal(body.messageId, messageId);
    assert.equal(body.variables.amount, 2500);
    assert.deepEqual(body.transcript[0], {
      ...body.transcript[0],
      speaker: 'agent',
      text: 'Namaste Ravi, this is Acme Finance about your loan payment.',
      tags: ['Interrupted'],
      unspoken: 'about your loan payment.',
    });
    assert.deepEqual(
      body.transcript.map((t) => `${t.speaker}: ${t.text}`),
      [
        'agent: Namaste Ravi, this is Acme Finance about your loan payment.',
        'agent: Will you pay the due amount?',
        'caller: haan ji, yes I will pay',
        'agent: How much can you pay?',
        // The Ask block offers the keypad for a number (the recipe's dtmf settings end with hash).
        'agent: You can also key it in, then press hash.',
        'caller: I can pay 2500 rupees',
        'agent: Thank you, goodbye.',
      ],
    );

    // 7. The Master Report has one analysis.<name> column per parameter, with the values.
    const response = await fetch(`${app.server.url}/v1/tenants/acme/reports/master.csv?from=2026-11-20&to=2026-11-20&campaign=${campaignId}`, {
      headers: { Authorization: `Bearer ${operatorToken}` },
    });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/csv; charset=utf-8/);
    assert.match(response.headers.get('content-disposition') ?? '', /^attachment; filename="master-report-acme-\d{8}-\d{6}\.csv"$/);
    const rows = parse(await response.text(), { columns: true }) as Array<Record<string, string>>;
    assert.equal(rows.length, 1);
    const row = rows[0]!;
    assert.deepEqual(
      Object.keys(row).filter((k) => k.startsWith('analysis.')),
      ['analysis.agreed_to_pay', 'analysis.amount', 'analysis.payment_date', 'analysis.status', 'analysis.summary'],
    );
    assert.equal(row.call_id, callId);
    assert.equal(row.message_id, messageId);
    assert.equal(row.campaign_name, 'Loan reminders');
    assert.equal(row.analysis_status, 'completed');
    assert.equal(row['analysis.agreed_to_pay'], 'true');
    assert.equal(row['analysis.amount'], '2500');
    assert.equal(row['analysis.payment_date'], '2026-11-27');
    assert.equal(row['analysis.status'], 'promise_to_pay');
    assert.equal(row['analysis.summary'], summary);
  });
});
