import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Validator } from '@seriousme/openapi-schema-validator';
import { openStore } from '../../control-api/platform/store/database.js';
import { OpenApiResponseValidator, type OpenApiDocument } from '../helpers/openapi-response-validator.js';
import { exitCode, spawnPlatform, waitForLine } from '../helpers/platform-process.js';
import { runSipp } from '../helpers/sipp.js';
import { UdpPeer, sipRequest } from '../gateway/udp-peer.js';
import { applyDocuments, carrierIp, did, operationsTenant, promtoolCheck, seriesValue, startOperationsPlatform, type RunningPlatform } from './operations-helpers.js';
import { seedEmbeddedDatabase } from '../helpers/pglite-template.js';

/** Every metric name the Grafana dashboard's queries use. */
function dashboardMetrics(): string[] {
  const file = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../docs/grafana/voice-agent-platform.json');
  const dashboard = JSON.parse(readFileSync(file, 'utf8')) as { panels: Array<{ targets?: Array<{ expr: string }> }> };
  const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
  assert.ok(exprs.length > 20, 'the dashboard has its queries');
  return [...new Set(exprs.flatMap((e) => e.match(/\b(?:vap|process|nodejs)_[a-z0-9_]+/g) ?? []))].sort();
}

/** Whether /metrics declares the family a name belongs to (a histogram's _bucket/_sum/_count included). */
function servedFamily(exposition: string, name: string): boolean {
  const declared = (n: string, type?: string): boolean => new RegExp(`^# TYPE ${n} ${type ?? '\\S+'}$`, 'm').test(exposition);
  const base = name.replace(/_(bucket|sum|count)$/, '');
  return declared(name) || (base !== name && (declared(base, 'histogram') || declared(base, 'summary')));
}

/** GET with the operator token, JSON body. */
async function getJson(p: RunningPlatform, url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${p.controlUrl}${url}`, { headers: { Authorization: `Bearer ${p.operatorToken}` } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function options(port: number, from = carrierIp): Promise<string> {
  const peer = await UdpPeer.open(from);
  try {
    peer.send(port, sipRequest(peer, 'OPTIONS', { callId: `keepalive-${Math.random()}` }));
    return (await peer.wait((e) => /^SIP\/2\.0 \d{3} /.test(e.text), 5000)).text;
  } finally {
    peer.close();
  }
}

/** Polls `check` every 100 ms until it returns a value; fails after `ms`. */
async function eventually<T>(check: () => Promise<T | undefined>, ms: number, what: string): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Issue 14 against the real platform process (gateway, control and worker roles, PGlite): the
 * metrics after real SIP and HTTP traffic pass `promtool check metrics`; one call has one id
 * from SIP to record to logs; SIGTERM drains (503 + Retry-After to new INVITEs and OPTIONS,
 * /readyz 503, the live call ends normally, then the process exits).
 */
describe('platform process: metrics, correlation and drain on SIGTERM (SIPp, promtool)', function () {
  this.timeout(300_000);
  let dataDir: string;
  let p: RunningPlatform;

  before(async function () {
    this.timeout(300_000);
    dataDir = mkdtempSync(path.join(tmpdir(), 'vap-ops-'));
    await seedEmbeddedDatabase(dataDir);
    await applyDocuments(dataDir, operationsTenant());
    p = await startOperationsPlatform(dataDir, { DRAIN_TIMEOUT_MS: '60000' });
  });
  after(() => {
    if (p.process.child.exitCode === null) p.process.child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('serves metrics that promtool finds nothing wrong with, after calls, refusals and API requests', async () => {
    const call = await runSipp({ scenario: 'uac-invite-expect-200-caller-bye-after-pause.xml', target: `127.0.0.1:${p.sipPort}`, service: did, localIp: carrierIp, extraArgs: ['-d', '2500'], timeoutMs: 30_000 });
    assert.equal(call.successful, 1, `SIPp call: ${call.errors}\n${p.process.stderr}`);
    const unknown = await runSipp({ scenario: 'uac-invite-expect-404.xml', target: `127.0.0.1:${p.sipPort}`, service: '+914440009999', localIp: carrierIp, timeoutMs: 20_000 });
    assert.equal(unknown.successful, 1, unknown.errors);
    assert.match(await options(p.sipPort), /^SIP\/2\.0 200 /);
    assert.equal((await getJson(p, '/v1/tenants')).status, 200);
    assert.equal((await fetch(`${p.controlUrl}/v1/nothing-here`)).status, 404);

    const exposition = await (await fetch(`${p.controlUrl}/metrics`)).text();
    const { status, findings } = promtoolCheck(exposition);
    assert.equal(findings, '', `promtool findings:\n${findings}`);
    assert.equal(status, 0);

    // Standard names for prom-client's defaults; the gateway's own series after the traffic above.
    for (const name of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'nodejs_heap_size_total_bytes', 'nodejs_eventloop_lag_seconds']) {
      assert.ok(seriesValue(exposition, name) !== undefined, `${name} is served`);
    }
    assert.doesNotMatch(exposition, /^vap_process_/m);
    assert.ok((seriesValue(exposition, 'vap_sip_requests_received_total{method="INVITE",transport="udp"}') ?? 0) >= 2);
    assert.ok((seriesValue(exposition, 'vap_sip_requests_received_total{method="OPTIONS",transport="udp"}') ?? 0) >= 1);
    assert.ok((seriesValue(exposition, 'vap_sip_responses_sent_total{method="INVITE",status="200",transport="udp"}') ?? 0) >= 1);
    assert.ok((seriesValue(exposition, 'vap_sip_responses_sent_total{method="INVITE",status="404",transport="udp"}') ?? 0) >= 1);
    assert.ok((seriesValue(exposition, 'vap_sip_responses_sent_total{method="BYE",status="200",transport="udp"}') ?? 0) >= 1);
    // Calls by direction, outcome and end reason; the answered one's duration (it lasted about 2.5 s).
    assert.equal(seriesValue(exposition, 'vap_calls_total{direction="inbound",outcome="answered",end_reason="remote-bye"}'), 1);
    assert.equal(seriesValue(exposition, 'vap_calls_total{direction="inbound",outcome="rejected",end_reason="404"}'), 1);
    assert.equal(seriesValue(exposition, 'vap_call_duration_seconds_count{direction="inbound"}'), 1);
    assert.ok((seriesValue(exposition, 'vap_call_duration_seconds_sum{direction="inbound"}') ?? 0) >= 2);
    assert.match(exposition, /^vap_build_info\{version="\d+\.\d+\.\d+[^"]*"\} 1$/m);
    for (const family of ['vap_provider_webhooks_total counter', 'vap_provider_media_streams_total counter', 'vap_provider_calls_active gauge', 'vap_rtpengine_commands_total counter', 'vap_sip_registration_state gauge', 'vap_sip_registration_expiry_seconds gauge', 'vap_sip_registrations_granted_total counter']) {
      assert.match(exposition, new RegExp(`^# TYPE ${family}$`, 'm'));
    }
    // Every metric the shipped Grafana dashboard queries is served (docs/grafana/).
    const missing = dashboardMetrics().filter((name) => !servedFamily(exposition, name));
    assert.deepEqual(missing, [], `docs/grafana/voice-agent-platform.json queries metrics /metrics does not serve`);
    assert.equal(seriesValue(exposition, 'vap_sip_invite_answer_seconds_count{direction="inbound"}'), 1);
    assert.ok((seriesValue(exposition, 'vap_rtp_packets_received_total') ?? 0) > 50, 'the caller streamed RTP');
    assert.ok((seriesValue(exposition, 'vap_rtp_packets_sent_total') ?? 0) > 50, 'the agent spoke');
    assert.ok((seriesValue(exposition, 'vap_tts_first_audio_seconds_count{provider="espeak-ng"}') ?? 0) >= 1);
    assert.equal(seriesValue(exposition, 'vap_gateway_draining'), 0);
    assert.match(exposition, /^# TYPE vap_sip_transaction_timeouts_total counter$/m);
    assert.match(exposition, /^# TYPE vap_sip_requests_shed_total counter$/m);
    assert.match(exposition, /^# TYPE vap_calls_active gauge$/m);
    assert.match(exposition, /^# TYPE vap_campaign_backlog_messages gauge$/m);
    assert.match(exposition, /^# TYPE vap_stt_latency_seconds histogram$/m);
    assert.match(exposition, /^# TYPE vap_llm_latency_seconds histogram$/m);
    assert.match(exposition, /^vap_http_request_duration_seconds_count\{app="control",method="GET",route="\/v1\/tenants"\} [1-9]/m);
  });

  it('gives the call one id from SIP to record to logs, and stores and serves its SIP Call-ID', async () => {
    const answered = p.process.lines.find((l) => l['msg'] === 'inbound call answered');
    assert.ok(answered, 'the gateway logged the answer');
    const callId = String(answered['callId']);
    const sipCallId = String(answered['sipCallId']);
    const record = await eventually(async () => {
      const got = await getJson(p, `/v1/tenants/ops/calls/${callId}`);
      return got.status === 200 && got.body['status'] === 'ended' ? got.body : undefined;
    }, 20_000, 'the call record under the gateway\'s call id');
    assert.equal(record['id'], callId, 'the record id is the gateway\'s call id');
    assert.equal(record['sipCallId'], sipCallId);
    assert.match(sipCallId, /.+/);
    // The SIP facts a trace would show: SIPp called over UDP from its loopback address with G.711.
    const sip = record['sip'] as { transport: string; remoteAddress: string; codec: string };
    assert.equal(sip.transport, 'udp', JSON.stringify(sip));
    assert.match(sip.remoteAddress, /^127\.\d+\.\d+\.\d+$/, JSON.stringify(sip));
    assert.match(sip.codec, /^PCM[UA]$/, JSON.stringify(sip));
    // Every log line of the call carries both ids: the gateway's and the recipe handler's alike.
    const ofCall = p.process.lines.filter((l) => l['callId'] === callId || l['sipCallId'] === sipCallId);
    const shown = ofCall.map((l) => `${String(l['part'] ?? '-')}: ${String(l['msg'])}`).join(' | ');
    for (const line of ofCall) {
      assert.equal(line['callId'], callId, `"${String(line['msg'])}" carries the call id (${shown})`);
      assert.equal(line['sipCallId'], sipCallId, `"${String(line['msg'])}" carries the SIP Call-ID (${shown})`);
    }
    assert.ok(ofCall.some((l) => l['part'] === 'calls'), `the recipe handler logs under the same ids: ${shown}`);
  });

  it('drains on SIGTERM: refuses new INVITEs and OPTIONS with 503 + Retry-After, reports not ready, lets the live call end, then exits', async () => {
    const live = runSipp({ scenario: 'uac-invite-expect-200-caller-bye-after-pause.xml', target: `127.0.0.1:${p.sipPort}`, service: did, localIp: carrierIp, extraArgs: ['-d', '6000'], timeoutMs: 40_000 });
    await eventually(async () => {
      const m = await (await fetch(`${p.controlUrl}/metrics`)).text();
      return (seriesValue(m, 'vap_gateway_live_calls') ?? 0) >= 1 ? true : undefined;
    }, 15_000, 'the second call is up');
    const uuid = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
    assert.match(await (await fetch(`${p.controlUrl}/metrics`)).text(), new RegExp(`^vap_calls_active\\{direction="inbound",tenant="${uuid}",trunk="${uuid}"\\} 1$`, 'm'));

    p.process.child.kill('SIGTERM');
    await waitForLine(p.process, 'gateway draining: new INVITEs and OPTIONS get 503, live calls go on', 10_000);
    const ready = await fetch(`${p.controlUrl}/readyz`);
    assert.equal(ready.status, 503);
    const metrics = await (await fetch(`${p.controlUrl}/metrics`)).text();
    assert.equal(seriesValue(metrics, 'vap_gateway_draining'), 1);
    assert.equal(seriesValue(metrics, 'vap_gateway_live_calls'), 1);

    const refused = await runSipp({ scenario: 'uac-invite-expect-503-retry-after.xml', target: `127.0.0.1:${p.sipPort}`, service: did, localIp: carrierIp, timeoutMs: 15_000 });
    assert.equal(refused.successful, 1, `new INVITE during the drain: ${refused.errors}`);
    assert.match(await options(p.sipPort), /^SIP\/2\.0 503 [^\r]*\r\n(?:[^\r]*\r\n)*Retry-After: \d+\r\n/);

    const call = await live;
    assert.equal(call.successful, 1, `the live call went on and ended with the caller's BYE: ${call.errors}`);
    assert.equal(await exitCode(p.process, 30_000), 0, p.process.stderr);
    const drained = p.process.lines.find((l) => l['msg'] === 'gateway drained');
    assert.equal(drained?.['endedAtTimeout'], 0);
    assert.ok(p.process.lines.some((l) => l['msg'] === 'stopped'));
  });
});

/** POST /v1/admin/drain with a short drain timeout: the call still up gets a BYE, its record says why. */
describe('platform process: drain requested over the API, with a call outlasting the drain timeout', function () {
  this.timeout(300_000);
  let dataDir: string;
  let p: RunningPlatform;

  before(async function () {
    this.timeout(300_000);
    dataDir = mkdtempSync(path.join(tmpdir(), 'vap-ops-'));
    await seedEmbeddedDatabase(dataDir);
    await applyDocuments(dataDir, operationsTenant());
    p = await startOperationsPlatform(dataDir, { DRAIN_TIMEOUT_MS: '2000' });
  });
  after(() => {
    if (p.process.child.exitCode === null) p.process.child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('is refused without the operator token, then ends the call with BYE at the timeout and exits', async () => {
    // This caller never hangs up: it waits for the gateway's BYE.
    const live = runSipp({ scenario: 'uac-invite-expect-200-gateway-bye.xml', target: `127.0.0.1:${p.sipPort}`, service: did, localIp: carrierIp, timeoutMs: 40_000 });
    const answered = await waitForLine(p.process, 'inbound call answered', 15_000);
    // The routes are in the served OpenAPI document, and every answer below matches it.
    const document = (await (await fetch(`${p.controlUrl}/v1/openapi.json`)).json()) as OpenApiDocument;
    const valid = await new Validator().validate(document as unknown as Record<string, unknown>);
    assert.equal(valid.valid, true, JSON.stringify(valid.errors));
    const api = new OpenApiResponseValidator(document);
    const drainUrl = `${p.controlUrl}/v1/admin/drain`;
    const operator = { Authorization: `Bearer ${p.operatorToken}` };
    assert.equal((await api.check('POST', '/v1/admin/drain', await fetch(drainUrl, { method: 'POST' }))).status, 401);
    const tenantToken = await fetch(`${p.controlUrl}/v1/tenants/ops/tokens`, { method: 'POST', headers: { ...operator, 'Content-Type': 'application/json' }, body: JSON.stringify({ name: 'ops', scopes: ['management'] }) });
    const token = String(((await tenantToken.json()) as { token?: string }).token);
    assert.equal((await api.check('POST', '/v1/admin/drain', await fetch(drainUrl, { method: 'POST', headers: { Authorization: `Bearer ${token}` } }))).status, 403, 'a tenant token may not drain the platform');
    const before = await api.check('GET', '/v1/admin/drain', await fetch(drainUrl, { headers: operator }));
    assert.deepEqual(before.body, { draining: false, liveCalls: 1, drainTimeoutMs: 2000 });

    const res = await api.check('POST', '/v1/admin/drain', await fetch(drainUrl, { method: 'POST', headers: operator }));
    assert.equal(res.status, 202);
    assert.deepEqual(res.body, { draining: true, liveCalls: 1, drainTimeoutMs: 2000 });

    const call = await live;
    assert.equal(call.successful, 1, `SIPp got the gateway's BYE: ${call.errors}`);
    assert.equal(await exitCode(p.process, 30_000), 0, p.process.stderr);
    assert.equal(p.process.lines.find((l) => l['msg'] === 'gateway drained')?.['endedAtTimeout'], 1);

    // The record was completed before the process exited.
    const store = await openStore({ pgliteDir: path.join(dataDir, 'pglite') });
    try {
      const row = await store.db.selectFrom('calls').select(['id', 'status', 'end_reason', 'sip_call_id']).where('id', '=', String(answered['callId'])).executeTakeFirstOrThrow();
      assert.equal(row.status, 'ended');
      assert.equal(row.end_reason, 'drainTimeout');
      assert.equal(row.sip_call_id, answered['sipCallId']);
    } finally {
      await store.close();
    }
  });
});

/** A gateway on its own (no control or sandbox role) serves its metrics and readiness on ops.port. */
describe('platform process: the gateway alone, with an ops endpoint', function () {
  this.timeout(300_000);

  it('serves /healthz, /readyz and promtool-clean /metrics with the gateway\'s series on OPS_PORT, and says so when there is none', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'vap-ops-gw-'));
    await seedEmbeddedDatabase(dataDir);
    const gatewayOnly = { DATABASE_URL: '', CONFIG_FILE: '', DATA_DIR: dataDir, ROLES: 'gateway', SIP_HOST: '127.0.0.1', SIP_PORT: '0', SIP_TLS_PORT: '0', SIP_WS_PORT: '0', SIP_WSS_PORT: '0', SIP_PUBLIC_ADDRESS: '127.0.0.1' };
    const metricsToken = 'ops-metrics-token-0123456789abcdef';
    const started = spawnPlatform({ ...gatewayOnly, OPS_HOST: '127.0.0.1', OPS_PORT: '0', METRICS_TOKEN: metricsToken });
    try {
      const ops = await waitForLine(started, 'ops endpoint listening (/healthz, /readyz, /metrics)', 60_000);
      const sip = await waitForLine(started, 'platform started', 120_000).then(() => started.lines.find((l) => String(l['msg']).startsWith('SIP gateway listening')));
      const url = `http://127.0.0.1:${String(ops['port'])}`;
      assert.match(await options((sip?.['ports'] as Record<string, number>)['UDP'] as number, '127.0.0.1'), /^SIP\/2\.0 200 /);
      assert.equal((await fetch(`${url}/healthz`)).status, 200);
      assert.equal((await fetch(`${url}/readyz`)).status, 200);
      // ops.metricsToken: /metrics needs the bearer token; probes do not.
      const refused = await fetch(`${url}/metrics`);
      assert.equal(refused.status, 401);
      assert.equal(refused.headers.get('www-authenticate'), 'Bearer realm="metrics"');
      assert.equal((await fetch(`${url}/metrics`, { headers: { Authorization: 'Bearer wrong-token-0123456789' } })).status, 401);
      const exposition = await (await fetch(`${url}/metrics`, { headers: { Authorization: `Bearer ${metricsToken}` } })).text();
      assert.equal(promtoolCheck(exposition).findings, '');
      assert.ok((seriesValue(exposition, 'vap_sip_requests_received_total{method="OPTIONS",transport="udp"}') ?? 0) >= 1);
      assert.ok(!started.rawLines.some((l) => l.includes(metricsToken)) && !started.stderr.includes(metricsToken), 'the token is never logged');
      assert.ok(seriesValue(exposition, 'process_cpu_seconds_total') !== undefined);
      assert.equal(seriesValue(exposition, 'vap_gateway_draining'), 0);
      started.child.kill('SIGTERM');
      assert.equal(await exitCode(started, 30_000), 0, started.stderr);
    } finally {
      if (started.child.exitCode === null) started.child.kill('SIGKILL');
    }
    // Without OPS_PORT such a process has no HTTP at all, and its log says how to get one.
    const bare = spawnPlatform(gatewayOnly);
    try {
      await waitForLine(bare, 'platform started', 120_000);
      const warning = bare.lines.find((l) => l['msg'] === 'no /metrics, /readyz or /healthz in this process: set ops.port (OPS_PORT) to serve them');
      assert.equal(warning?.['level'], 'warn');
      bare.child.kill('SIGTERM');
      assert.equal(await exitCode(bare, 30_000), 0, bare.stderr);
    } finally {
      if (bare.child.exitCode === null) bare.child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
