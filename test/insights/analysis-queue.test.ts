import assert from 'node:assert/strict';
import { silentLogger } from '../../core/logger.js';
import { captureLogs } from '../helpers/log-capture.js';
import { CallRecorder } from '../../control-api/features/calls/call-recorder.js';
import { getCall } from '../../control-api/features/calls/call-repository.js';
import type { CallEnd, CallStart, TranscriptLine } from '../../control-api/features/calls/call-types.js';
import { claimJobs, finishJob, jobsOfCall } from '../../control-api/features/insights/analysis-jobs.js';
import { createPlatformAnalysisWorker } from '../../control-api/features/insights/analysis-runtime.js';
import { AnalysisWorker, type AnalysisWorkerOptions } from '../../control-api/features/insights/analysis-worker.js';
import type { InsightExtractor } from '../../control-api/features/insights/insight-extractor.js';
import { LlmInsightExtractor, recordInsightsTool } from '../../control-api/features/insights/llm-insight-extractor.js';
import { OfflineInsightExtractor } from '../../control-api/features/insights/offline-insight-extractor.js';
import { OpenAiCompatibleProvider } from '../../control-api/platform/llm/openai-compatible.js';
import { SafeHttp } from '../../control-api/platform/net/safe-http.js';
import type { Store } from '../../control-api/platform/store/database.js';
import { FakeChatCompletionsServer } from '../fakes/fake-chat-completions.js';
import { forEachStore } from '../helpers/stores.js';
import { verifySignature } from '../../control-api/platform/webhooks/signing.js';
import { secretKey } from '../helpers/management-app.js';
import { WebhookReceiver, createTenant, eventually, loanInsights, webhookSecret } from './insight-fixtures.js';
import { queueCallAnalysis } from '../../control-api/features/insights/queue-call-analysis.js';

const transcript: TranscriptLine[] = [
  { at: 1, speaker: 'agent', text: 'Will you agree to pay the due amount?' },
  { at: 2, speaker: 'caller', text: 'yes' },
  { at: 3, speaker: 'agent', text: 'How much can you pay?' },
  { at: 4, speaker: 'caller', text: '2500' },
];

forEachStore('durable post-call analysis queue', (getStore) => {
  let llm: FakeChatCompletionsServer;
  let receiver: WebhookReceiver;
  let tenantId: string;
  let quietTenantId: string;
  let seq = 0;

  before(async () => {
    llm = await new FakeChatCompletionsServer().start();
    receiver = await new WebhookReceiver().start();
    tenantId = await createTenant(getStore(), 'queue', receiver.url);
    quietTenantId = await createTenant(getStore(), 'quiet');
  });
  after(async () => {
    await receiver.stop();
    await llm.stop();
  });
  beforeEach(() => {
    llm.requests.length = 0;
    receiver.received.length = 0;
  });

  const store = (): Store => getStore();
  const recorder = (windowMs?: number) => new CallRecorder({ db: store().db, onConversationEnded: queueCallAnalysis(windowMs ? { analysisWindowMs: windowMs } : {}) });
  const start = (tenant = tenantId): CallStart => ({ tenantId: tenant, direction: 'inbound', startedAt: new Date(Date.UTC(2026, 10, 20, 6, 0, seq++)), remoteNumber: '+919812345678' });
  const end = (extra: Partial<CallEnd> = {}): CallEnd => ({ endedAt: new Date(), outcome: 'completed', transcript, insightParameters: loanInsights, ...extra });
  const llmExtractor = () => new LlmInsightExtractor(new OpenAiCompatibleProvider({ baseUrl: llm.baseUrl, model: 'm', maxRetries: 0 }));
  const worker = (extractor: InsightExtractor = new OfflineInsightExtractor(), extra: Partial<AnalysisWorkerOptions> = {}) =>
    new AnalysisWorker({
      db: store().db,
      logger: silentLogger,
      extractor,
      http: new SafeHttp({ allowlist: () => ['127.0.0.1'] }),
      tenantWebhook: async (id) => (id === tenantId ? { url: receiver.url, secret: 'whsec_queue_test_secret_123' } : {}),
      extractBackoffMs: () => 30,
      deliverBackoffMs: () => 30,
      ...extra,
    });
  /** Runs due jobs until the call's analysis and webhook jobs are final. */
  const settle = async (w: AnalysisWorker, callId: string) =>
    eventually(async () => {
      await w.drainOnce();
      const jobs = await jobsOfCall(store().db, callId);
      // A done extraction queues its delivery in the same transaction, so "all final" is final.
      return jobs.length > 0 && jobs.every((j) => j.state !== 'pending' && j.state !== 'running') ? jobs : undefined;
    }, 10_000, 'jobs to settle');

  it('skips analysis of a call that was never answered (busy)', async () => {
    const record = await recorder().recordCall({ ...start(), ...end({ outcome: 'busy', sipStatus: 486, transcript: [] }) });
    assert.equal(record.analysis.status, 'skipped');
    assert.equal(record.sipStatus, 486);
    assert.equal(record.durationMs, 0);
    assert.deepEqual(await jobsOfCall(store().db, record.id), []);
  });

  it('queues exactly one analysis even when hang-up is reported twice', async () => {
    const r = recorder();
    const id = await r.startCall(start());
    const first = await r.completeCall(id, end());
    const second = await r.completeCall(id, end({ disposition: 'changed' }));
    assert.equal(first.analysis.status, 'analyzing');
    assert.deepEqual(second, first);
    assert.equal((await jobsOfCall(store().db, id)).length, 1);
    await settle(worker(), id);
  });

  it("retakes a crashed worker's job after its lease, and fences the late worker out", async () => {
    const record = await recorder().recordCall({ ...start(), ...end() });
    const crashed = await claimJobs(store().db, 'crashed-worker', 10, new Date(), 150);
    const job = crashed.find((j) => j.call_id === record.id);
    assert.ok(job, 'the first worker claimed the job');
    const rescuer = worker(undefined, { leaseMs: 150 });
    assert.equal(await rescuer.drainOnce(), 0, 'a live lease is not taken');
    await new Promise((r) => setTimeout(r, 200));
    const jobs = await settle(rescuer, record.id);
    const extract = jobs.find((j) => j.kind === 'extract');
    assert.equal(extract?.state, 'done');
    assert.equal(extract?.attempts, 2);
    assert.equal(await finishJob(store().db, job, 'crashed-worker', { state: 'failed', at: new Date(), error: 'late' }), false);
    const call = await getCall(store().db, tenantId, record.id);
    assert.equal(call?.analysis.status, 'completed');
    assert.deepEqual(call?.analysis.values, { agreed_to_pay: true, amount: 2500, payment_date: null, status: null, summary: 'yes 2500' });
  });

  it('retries retryable provider errors with backoff, then completes', async () => {
    llm.enqueue({ status: 503 }, { status: 429, retryAfterSeconds: 0 }, { toolCalls: [{ name: recordInsightsTool, arguments: { amount: 700 } }] });
    const record = await recorder().recordCall({ ...start(), ...end() });
    const jobs = await settle(worker(llmExtractor()), record.id);
    const extract = jobs.find((j) => j.kind === 'extract');
    assert.equal(extract?.attempts, 3);
    assert.equal(llm.requests.length, 3);
    const call = await getCall(store().db, tenantId, record.id);
    assert.equal(call?.analysis.status, 'completed');
    assert.equal(call?.analysis.values?.amount, 700);
  });

  it('fails at once on a non-retryable provider error, with the reason', async () => {
    llm.enqueue({ status: 400 });
    const record = await recorder().recordCall({ ...start(), ...end() });
    const jobs = await settle(worker(llmExtractor()), record.id);
    assert.deepEqual(jobs.map((j) => [j.kind, j.state, j.attempts]), [['extract', 'failed', 1]]);
    const call = await getCall(store().db, tenantId, record.id);
    assert.equal(call?.analysis.status, 'failed');
    assert.match(call?.analysis.error ?? '', /HTTP 400/);
    assert.equal(receiver.received.length, 0, 'no analysis_success for a failed analysis');
  });

  it('retries an extraction that overran its time limit', async () => {
    llm.enqueue({ hang: true }, { toolCalls: [{ name: recordInsightsTool, arguments: { amount: 5 } }] });
    const record = await recorder().recordCall({ ...start(), ...end() });
    const jobs = await settle(worker(llmExtractor(), { extractTimeoutMs: 150 }), record.id);
    assert.equal(jobs.find((j) => j.kind === 'extract')?.attempts, 2);
    assert.equal((await getCall(store().db, tenantId, record.id))?.analysis.values?.amount, 5);
  });

  it('gives up after the bounded number of attempts', async () => {
    llm.setBrain(() => ({ status: 503 }));
    try {
      const record = await recorder().recordCall({ ...start(), ...end() });
      await settle(worker(llmExtractor(), { extractMaxAttempts: 3 }), record.id);
      const call = await getCall(store().db, tenantId, record.id);
      assert.equal(call?.analysis.status, 'failed');
      assert.match(call?.analysis.error ?? '', /^gave up after 3 attempts: chat completion failed with HTTP 503/);
    } finally {
      llm.setBrain(() => ({ content: 'x' }));
    }
  });

  it('does not retry past the analysis window (spec: at most 5 minutes after the call)', async () => {
    llm.enqueue({ status: 503 });
    const record = await recorder(50).recordCall({ ...start(), ...end() });
    await settle(worker(llmExtractor(), { extractBackoffMs: () => 60_000 }), record.id);
    const call = await getCall(store().db, tenantId, record.id);
    assert.equal(call?.analysis.status, 'failed');
    assert.match(call?.analysis.error ?? '', /^gave up after 1 attempts \(analysis window ends .+\): chat completion failed with HTTP 503/);
  });

  it('completes with no parameters and still announces the analysis', async () => {
    const record = await recorder().recordCall({ ...start(), ...end({ insightParameters: [] }) });
    await settle(worker(), record.id);
    assert.equal(llm.requests.length, 0);
    const payload = JSON.parse(receiver.received[0]?.body ?? '{}') as { room: { analysis: { user_defined: unknown } } };
    assert.deepEqual(payload.room.analysis.user_defined, {});
  });

  it('completes an answered call with an empty transcript with every value null, without asking the model', async () => {
    const record = await recorder().recordCall({ ...start(), ...end({ transcript: [] }) });
    await settle(worker(llmExtractor()), record.id);
    assert.equal(llm.requests.length, 0);
    const call = await getCall(store().db, tenantId, record.id);
    assert.equal(call?.analysis.status, 'completed');
    assert.deepEqual(call?.analysis.values, { agreed_to_pay: null, amount: null, payment_date: null, status: null, summary: null });
  });

  it('skips delivery when the tenant has no webhook URL', async () => {
    const record = await recorder().recordCall({ ...start(quietTenantId), ...end() });
    const jobs = await settle(worker(), record.id);
    assert.deepEqual(jobs.map((j) => [j.kind, j.state, j.last_error]), [['extract', 'done', null], ['deliver', 'skipped', 'the tenant has no webhook URL configured']]);
    assert.equal((await getCall(store().db, quietTenantId, record.id))?.analysis.status, 'completed');
  });

  it('stops delivering on a 4xx rejection, retries 5xx up to the bound', async () => {
    receiver.answer(410);
    const rejected = await recorder().recordCall({ ...start(), ...end() });
    const r1 = await settle(worker(), rejected.id);
    assert.deepEqual(r1.filter((j) => j.kind === 'deliver').map((j) => [j.state, j.attempts, j.last_status]), [['failed', 1, 410]]);
    receiver.answer(500, 502);
    const unlucky = await recorder().recordCall({ ...start(), ...end() });
    const r2 = await settle(worker(undefined, { deliverMaxAttempts: 2 }), unlucky.id);
    const deliver = r2.find((j) => j.kind === 'deliver');
    assert.deepEqual([deliver?.state, deliver?.attempts, deliver?.last_status], ['failed', 2, 502]);
    assert.match(deliver?.last_error ?? '', /^gave up after 2 attempts: receiver answered HTTP 502/);
  });

  it('logs an undelivered webhook at warn with its cause and the receiver\'s host, never the URL\'s secrets', async () => {
    const logs = captureLogs();
    const withToken = `${receiver.url}?token=qs-secret`;
    receiver.answer(500, 410);
    const call = await recorder().recordCall({ ...start(), ...end() });
    await settle(worker(undefined, { logger: logs.logger, tenantWebhook: async () => ({ url: withToken, secret: 'whsec_queue_test_secret_123' }) }), call.id);
    const warned = () => logs.lines.filter((l) => l.level === 'warn' && l.msg.startsWith('analysis_success webhook not delivered'));
    assert.deepEqual(warned().map((l) => [l.msg, l['status'], l['error'], l['willRetry'], l['callId'], l['host']]), [
      ['analysis_success webhook not delivered: will retry', 500, 'receiver answered HTTP 500', true, call.id, new URL(receiver.url).host],
      ['analysis_success webhook not delivered: given up', 410, 'receiver answered HTTP 410', false, call.id, new URL(receiver.url).host],
    ]);
    // A URL with credentials is refused before any request; the log names why, not them.
    const other = await recorder().recordCall({ ...start(), ...end() });
    const withUser = receiver.url.replace('http://', 'http://hook-user:hook-pass@');
    await settle(worker(undefined, { logger: logs.logger, tenantWebhook: async () => ({ url: withUser, secret: 'whsec_queue_test_secret_123' }) }), other.id);
    assert.match(String(warned().at(-1)?.['error']), /credentials in the URL are not allowed/);
    assert.doesNotMatch(logs.text(), /hook-pass|qs-secret|whsec_queue/);
  });

  it('hands a job back when its worker stops mid-extraction, and another worker finishes it', async () => {
    llm.enqueue({ hang: true });
    const record = await recorder().recordCall({ ...start(), ...end() });
    const first = worker(llmExtractor(), { pollMs: 20 });
    first.start();
    await eventually(() => (llm.requests.length > 0 ? true : undefined), 5_000, 'the extraction request');
    await first.stop();
    const [job] = await jobsOfCall(store().db, record.id);
    assert.deepEqual([job?.state, job?.attempts, job?.locked_by], ['pending', 0, null]);
    assert.equal((await getCall(store().db, tenantId, record.id))?.analysis.status, 'analyzing');
    llm.enqueue({ toolCalls: [{ name: recordInsightsTool, arguments: { amount: 42 } }] });
    await settle(worker(llmExtractor()), record.id);
    const call = await getCall(store().db, tenantId, record.id);
    assert.equal(call?.analysis.status, 'completed');
    assert.equal(call?.analysis.values?.amount, 42);
  });

  it('as the worker role builds it: the tenant\'s sealed secret signs, its allowlist admits the URL, offline extraction', async () => {
    const w = createPlatformAnalysisWorker({ db: store().db, logger: silentLogger, secretKey });
    const record = await recorder().recordCall({ ...start(), ...end() });
    await settle(w, record.id);
    assert.equal(llm.requests.length, 0, 'no provider configured: the offline extractor ran');
    const delivered = receiver.received.find((r) => (JSON.parse(r.body) as { call_id: string }).call_id === record.id);
    assert.ok(delivered);
    assert.deepEqual(verifySignature(webhookSecret, String(delivered.headers['x-vap-signature']), delivered.body), { ok: true });
    const payload = JSON.parse(delivered.body) as { room: { analysis: { user_defined: Record<string, string> } } };
    assert.deepEqual(payload.room.analysis.user_defined, { agreed_to_pay: 'true', amount: '2500', payment_date: '', status: '', summary: 'yes 2500' });
  });

  it('runs as a background loop that a recorder nudges, and stops cleanly', async () => {
    const w = worker(undefined, { pollMs: 5_000 });
    const r = new CallRecorder({ db: store().db, onConversationEnded: queueCallAnalysis(), onAnalysisQueued: () => w.nudge() });
    w.start();
    try {
      const started = Date.now();
      const record = await r.recordCall({ ...start(), ...end() });
      await eventually(async () => ((await getCall(store().db, tenantId, record.id))?.analysis.status === 'completed' ? true : undefined), 3_000, 'completion');
      assert.ok(Date.now() - started < 2_000, 'nudged, not waiting for the 5 s poll');
    } finally {
      await w.stop();
    }
  });
});
