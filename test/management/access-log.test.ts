import assert from 'node:assert/strict';
import { freshStore } from '../helpers/stores.js';
import { captureLogs, type LogCapture } from '../helpers/log-capture.js';
import { operatorToken, startManagementApp, type ManagementHarness } from '../helpers/management-app.js';
import type { Store } from '../../control-api/platform/store/database.js';

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Issue 14: one info-level access log line per request with a request id (the client's
 * X-Request-Id when it looks like an id, else a generated one, echoed in the response), method,
 * route pattern, status, duration and the tenant once known; never headers, tokens or bodies.
 * The HTTP latency histogram is labelled by route pattern, never by the raw path.
 */
describe('HTTP access log and route metrics (control API)', function () {
  this.timeout(60_000);
  let store: Store;
  let logs: LogCapture;
  let h: ManagementHarness;
  let tenantId = '';
  let tenantToken = '';

  before(async () => {
    store = await freshStore('pglite');
    logs = captureLogs('info');
    h = await startManagementApp(store, {}, { logger: logs.logger });
    const created = await h.client().post('/v1/tenants', { clientId: 'logs', name: 'Logs' });
    assert.equal(created.status, 201);
    tenantId = String(created.body['id']);
    tenantToken = String((await h.client().post('/v1/tenants/logs/tokens', { name: 'ci', scopes: ['management'] })).body['token']);
  });
  after(async () => {
    await h.close();
    await store.close();
  });

  const accessLines = () => logs.lines.filter((l) => l.msg === 'http request');

  it('logs one info line per request with the request id it echoes, the route pattern, status, ms and tenant', async () => {
    const res = await h.client(tenantToken).request('GET', '/v1/tenants/logs/sip-info', { headers: { 'X-Request-Id': 'edge-7f3a.42' }, unchecked: true });
    assert.equal(res.headers.get('x-request-id'), 'edge-7f3a.42', 'a sane incoming id is kept and echoed');
    const line = accessLines().find((l) => l['requestId'] === 'edge-7f3a.42');
    assert.ok(line, 'one access line carries the request id');
    assert.equal(line.level, 'info');
    assert.equal(line['app'], 'control');
    assert.equal(line['method'], 'GET');
    assert.equal(line['route'], '/v1/tenants/:clientId/sip-info');
    assert.equal(line['status'], res.status);
    assert.equal(typeof line['ms'], 'number');
    assert.equal(line['tenantId'], tenantId, 'the tenant the token belongs to');
    assert.equal(accessLines().filter((l) => l['requestId'] === 'edge-7f3a.42').length, 1);
  });

  it('names the tenant an operator request acts on', async () => {
    await h.client().request('GET', '/v1/tenants/logs/tokens', { headers: { 'X-Request-Id': 'op-tokens-1' }, unchecked: true });
    const line = accessLines().find((l) => l['requestId'] === 'op-tokens-1');
    assert.equal(line?.['tenantId'], tenantId);
    assert.equal(line?.['route'], '/v1/tenants/:clientId/tokens');
  });

  it('replaces an incoming id that does not look like one, and generates one when none came', async () => {
    const odd = await h.client().request('GET', '/v1/tenants', { headers: { 'X-Request-Id': 'two words\tand a tab' }, unchecked: true });
    assert.match(odd.headers.get('x-request-id') ?? '', uuid);
    const long = await h.client().request('GET', '/v1/tenants', { headers: { 'X-Request-Id': 'a'.repeat(129) }, unchecked: true });
    assert.match(long.headers.get('x-request-id') ?? '', uuid);
    const none = await h.client().request('GET', '/v1/tenants', { unchecked: true });
    const id = none.headers.get('x-request-id') ?? '';
    assert.match(id, uuid);
    assert.equal(accessLines().find((l) => l['requestId'] === id)?.['route'], '/v1/tenants');
  });

  it('labels unmatched paths with a constant and never logs credentials', async () => {
    const res = await h.client().request('GET', '/no/such/path/4711', { headers: { 'X-Request-Id': 'lost-1' }, unchecked: true });
    assert.equal(res.status, 404);
    const line = accessLines().find((l) => l['requestId'] === 'lost-1');
    assert.equal(line?.['route'], 'unmatched');
    const text = logs.text();
    assert.ok(!text.includes(operatorToken) && !text.includes(tenantToken), 'no token in the log');
    assert.ok(!/authorization/i.test(text), 'no header in the log');
  });

  it('labels the latency histogram by route pattern, never by the raw path', async () => {
    const metrics = await (await fetch(`${h.server.url}/metrics`)).text();
    assert.match(metrics, /^vap_http_request_duration_seconds_count\{app="control",method="GET",route="\/v1\/tenants\/:clientId\/sip-info"\} [1-9]/m);
    assert.match(metrics, /^vap_http_request_duration_seconds_count\{app="control",method="GET",route="unmatched"\} [1-9]/m);
    assert.doesNotMatch(metrics, /route="\/no\/such/);
    assert.doesNotMatch(metrics, /route="\/v1\/tenants\/logs/);
  });

  it('logs a Master Report download link with its token redacted', async () => {
    const link = await h.client(tenantToken).request('POST', '/v1/tenants/logs/reports/master.csv/links', { unchecked: true });
    assert.equal(link.status, 201, link.text);
    const url = String(link.body['url']);
    const token = url.split('/').pop() ?? '';
    assert.ok(token.length > 40);
    const res = await fetch(`${h.server.url}${url}`, { headers: { 'X-Request-Id': 'download-1' } });
    assert.equal(res.status, 200);
    await res.text();
    const line = accessLines().find((l) => l['requestId'] === 'download-1');
    assert.equal(line?.['path'], '/v1/report-downloads/<redacted>');
    assert.equal(line?.['route'], '/v1/report-downloads/:token');
    assert.ok(!logs.lines.some((l) => JSON.stringify(l).includes(token.slice(-30))), 'the link token is in no log line');
  });
});
