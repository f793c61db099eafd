/**
 * Post-call analysis under load: how long from hang-up to `completed` (and to the delivered
 * webhook) when calls end at a steady rate and the model takes a realistic time to answer.
 *
 * Calls end at `--rate` per second (each with a transcript and the 5 insight parameters of the
 * loan recipe); a loopback chat-completions server answers every extraction after
 * `--llm-latency-ms`; a loopback receiver takes the signed webhooks. Prints hang-up-to-completed
 * latency percentiles, the worst backlog seen, and webhook deliveries. The spec bound is 5 minutes.
 *
 *   node --import tsx bench/analysis-throughput.ts [--calls 3000] [--rate 50] [--llm-latency-ms 800] [--concurrency 64] [--url postgres://...]
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { silentLogger } from '../core/logger.js';
import { CallRecorder } from '../control-api/features/calls/call-recorder.js';
import type { TranscriptLine } from '../control-api/features/calls/call-types.js';
import { createSecretBox } from '../control-api/platform/crypto/secret-box.js';
import { backlog } from '../control-api/features/insights/analysis-jobs.js';
import { AnalysisWorker } from '../control-api/features/insights/analysis-worker.js';
import { LlmInsightExtractor, recordInsightsTool } from '../control-api/features/insights/llm-insight-extractor.js';
import { OpenAiCompatibleProvider } from '../control-api/platform/llm/openai-compatible.js';
import { SafeHttp } from '../control-api/platform/net/safe-http.js';
import { openStore } from '../control-api/platform/store/database.js';
import { migrateToLatest } from '../control-api/platform/store/migrate.js';
import { createTenantsRepository } from '../control-api/model/tenants/tenants-repository.js';
import { FakeChatCompletionsServer } from '../test/fakes/fake-chat-completions.js';
import { startPostgresCluster, type PostgresCluster } from '../test/helpers/postgres-cluster.js';
import { loanInsights } from '../test/insights/insight-fixtures.js';
import { queueCallAnalysis } from '../control-api/features/insights/queue-call-analysis.js';

function arg(name: string, fallback: string): number {
  const i = process.argv.indexOf(`--${name}`);
  return Number(i > 0 ? (process.argv[i + 1] ?? fallback) : fallback);
}
const calls = arg('calls', '3000');
const rate = arg('rate', '50');
const latencyMs = arg('llm-latency-ms', '800');
const concurrency = arg('concurrency', '64');

let cluster: PostgresCluster | undefined;
let url = process.argv.includes('--url') ? (process.argv[process.argv.indexOf('--url') + 1] ?? '') : '';
if (!url) {
  cluster = await startPostgresCluster();
  url = await cluster.createDatabase('analysis_bench');
}
const store = await openStore({ url, poolSize: 10 });
const llm = await new FakeChatCompletionsServer(async () => {
  await new Promise((r) => setTimeout(r, latencyMs));
  return { toolCalls: [{ name: recordInsightsTool, arguments: { agreed_to_pay: true, amount: 2500, payment_date: '2026-11-27', status: 'promise_to_pay', summary: 'Agreed, will pay ₹2,500 — हाँ' } }] };
}).start();
let delivered = 0;
const receiver = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    delivered++;
    res.writeHead(200).end();
  });
});
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

try {
  await migrateToLatest(store.db);
  const tenant = await createTenantsRepository(createSecretBox(Buffer.alloc(32, 5))).create(store.db, {
    clientId: 'bench',
    name: 'Bench',
    timezone: 'Asia/Kolkata',
    settings: { webhookUrl: hookUrl, webhookSecret: 'whsec_bench_secret_0123456789', ssrfAllowlist: ['127.0.0.1'] },
  });
  const worker = new AnalysisWorker({
    db: store.db,
    logger: silentLogger,
    extractor: new LlmInsightExtractor(new OpenAiCompatibleProvider({ baseUrl: llm.baseUrl, model: 'bench' })),
    http: new SafeHttp({ allowlist: () => ['127.0.0.1'] }),
    tenantWebhook: async () => ({ url: hookUrl, secret: 'whsec_bench_secret_0123456789' }),
    concurrency,
  });
  const recorder = new CallRecorder({ db: store.db, onConversationEnded: queueCallAnalysis(), onAnalysisQueued: () => worker.nudge() });
  worker.start();
  const transcript: TranscriptLine[] = [
    { at: 1, speaker: 'agent', text: 'Will you pay the due amount?' },
    { at: 2, speaker: 'caller', text: 'haan ji, I will pay 2500 on Friday' },
  ];
  let worstBacklog = { open: 0, oldestDueMs: 0 };
  const sampler = setInterval(() => {
    void backlog(store.db, new Date()).then((b) => {
      if (b.open > worstBacklog.open) worstBacklog = { ...worstBacklog, open: b.open };
      if (b.oldestDueMs > worstBacklog.oldestDueMs) worstBacklog = { ...worstBacklog, oldestDueMs: b.oldestDueMs };
    });
  }, 250);
  const started = performance.now();
  let ended = 0;
  const pending: Promise<unknown>[] = [];
  // Calls end on a fixed schedule, whatever the worker is doing (open-loop load).
  await new Promise<void>((resolve) => {
    const tick = setInterval(() => {
      const due = Math.min(calls, Math.floor(((performance.now() - started) / 1000) * rate));
      while (ended < due) {
        ended++;
        const now = new Date();
        pending.push(
          recorder.recordCall({ tenantId: tenant.id, direction: 'outbound', startedAt: new Date(now.getTime() - 60_000), endedAt: now, outcome: 'completed', transcript, insightParameters: loanInsights }),
        );
      }
      if (ended >= calls) {
        clearInterval(tick);
        resolve();
      }
    }, 20);
  });
  await Promise.all(pending);
  const progress = setInterval(() => process.stdout.write(`  ${delivered} / ${calls} webhooks delivered\n`), 5_000);
  while (delivered < calls && performance.now() - started < 600_000) await new Promise((r) => setTimeout(r, 100));
  clearInterval(progress);
  clearInterval(sampler);
  const seconds = (performance.now() - started) / 1000;
  await worker.stop();
  const rows = await store.db
    .selectFrom('calls')
    .select(['ended_at', 'analysis_completed_at', 'analysis_status'])
    .where('tenant_id', '=', tenant.id)
    .execute();
  const latencies = rows
    .filter((r) => r.analysis_completed_at && r.ended_at)
    .map((r) => (r.analysis_completed_at as Date).getTime() - (r.ended_at as Date).getTime())
    .sort((a, b) => a - b);
  const pct = (p: number): string => `${((latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? 0) / 1000).toFixed(2)} s`;
  process.stdout.write(
    `${calls} calls ending at ${rate}/s, model latency ${latencyMs} ms, worker concurrency ${concurrency}: ` +
      `${latencies.length} completed, ${rows.filter((r) => r.analysis_status === 'failed').length} failed, ${delivered} webhooks delivered in ${seconds.toFixed(1)} s\n` +
      `hang-up -> completed: p50 ${pct(50)}, p95 ${pct(95)}, p99 ${pct(99)}, max ${pct(100)} (spec bound 300 s); ` +
      `worst backlog ${worstBacklog.open} open jobs, oldest due ${(worstBacklog.oldestDueMs / 1000).toFixed(1)} s\n`,
  );
} finally {
  receiver.close();
  await llm.stop();
  await store.close();
  await cluster?.stop();
}
