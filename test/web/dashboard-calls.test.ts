import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import type { Page } from 'playwright-core';
import type { Store } from '../../control-api/platform/store/database.js';
import { assertAccessible } from './axe.js';
import { nav } from './campaign-flow.js';
import { signIn, startDashboardHarness, type DashboardHarness } from './dashboard-harness.js';
import { dashboardDatabase, seedCalls, seedDetailedCall } from './seed-calls.js';

const freeTcpPort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

interface CallPage {
  readonly items: Array<{ id: string; startedAt: string; durationSeconds: number; contactNumber: string; direction: string; endReason: string }>;
  readonly nextCursor?: string;
  readonly prevCursor?: string;
}

/**
 * Issue 29, the call history as operators use it every day: 121 calls (120 seeded a minute apart
 * plus one with everything the call page shows) in the platform's PostgreSQL. The list opens on
 * the newest, sorts, filters and pages both ways (the API and the page), the call page shows
 * variables, keyed turns, SIP facts and the record's end reason, the report downloads natively,
 * and a web call that cannot open the WSS says how to accept the certificate.
 */
describe('dashboard in Chromium: calls, call page, report, web call hint', function () {
  this.timeout(180_000);
  let h: DashboardHarness;
  let store: Store;
  let page: Page;
  let token: string;
  let detailed: string;
  let wssPort: number;
  const calls = `/v1/tenants/acme/calls`;

  before(async () => {
    const db = await dashboardDatabase();
    store = db.store;
    wssPort = await freeTcpPort();
    h = await startDashboardHarness({ env: { DATABASE_URL: db.url, SIP_WSS_PORT: String(wssPort) } });
    assert.equal((await h.api('POST', '/v1/tenants', { clientId: 'acme', name: 'Acme Ltd', timezone: 'UTC' })).status, 201);
    token = (await h.api<{ token: string }>('POST', '/v1/tenants/acme/tokens', { name: 'dashboard', scopes: ['management'] })).body.token;
    await seedCalls(store, 'acme', 120, new Date('2026-01-10T08:00:00Z'));
    detailed = await seedDetailedCall(store, 'acme', new Date('2026-01-11T10:00:00Z'));
    page = await h.chromium.browser.newPage({ viewport: { width: 1280, height: 800 } });
  });
  after(async () => {
    await store?.close();
    if (h) await h.close();
  });

  it('API: newest first by default, by duration either way, cursors both ways, precise 400s', async () => {
    const first = (await h.api<CallPage>('GET', `${calls}?limit=50`)).body;
    assert.equal(first.items[0]?.id, detailed);
    assert.equal(first.prevCursor, undefined);
    const times = first.items.map((c) => Date.parse(c.startedAt));
    assert.deepEqual(times, [...times].sort((a, b) => b - a));
    const second = (await h.api<CallPage>('GET', `${calls}?limit=50&cursor=${first.nextCursor}`)).body;
    assert.ok(Date.parse(second.items[0]!.startedAt) < Date.parse(first.items[49]!.startedAt));
    const back = (await h.api<CallPage>('GET', `${calls}?limit=50&cursor=${second.prevCursor}`)).body;
    assert.deepEqual(back.items.map((c) => c.id), first.items.map((c) => c.id));
    const third = (await h.api<CallPage>('GET', `${calls}?limit=50&cursor=${second.nextCursor}`)).body;
    assert.equal(third.items.length, 21);
    assert.equal(third.nextCursor, undefined);
    const longest = (await h.api<CallPage>('GET', `${calls}?sort=duration&limit=200`)).body.items.map((c) => c.durationSeconds);
    assert.deepEqual(longest, [...longest].sort((a, b) => b - a));
    const shortest = (await h.api<CallPage>('GET', `${calls}?sort=duration&order=asc&limit=200`)).body.items.map((c) => c.durationSeconds);
    assert.deepEqual(shortest, [...longest].reverse());
    const transferred = (await h.api<CallPage>('GET', `${calls}?endReason=transferred&limit=200`)).body.items;
    assert.equal(transferred.length, 10); // 9 seeded (every 13th of 120) and the detailed call
    const bySip = (await h.api<CallPage>('GET', `${calls}?sipCallId=a84b4c76e66710@pc33.example.com`)).body.items;
    assert.deepEqual(bySip.map((c) => c.id), [detailed]);
    const refused = async (query: string, path: string, message: RegExp) => {
      const r = await h.api<{ code: string; message: string; issues: Array<{ path: string }> }>('GET', `${calls}?${query}`);
      assert.equal(r.status, 400, query);
      assert.equal(r.body.issues[0]?.path, path, query);
      assert.match(r.body.message, message, query);
    };
    await refused('sort=size', 'sort', /sort must be one of startedAt, duration/);
    await refused('order=up', 'order', /order must be one of desc, asc/);
    await refused(`sort=duration&cursor=${first.nextCursor}`, 'cursor', /belongs to sort=startedAt&order=desc/);
    await refused('cursor=bm90LWEtY3Vyc29y', 'cursor', /not a cursor returned by this list/);
    await refused('from=yesterday', 'from', /must be a date YYYY-MM-DD/);
  });

  it('the Calls page opens on the newest call, pages Older and Newer, sorts and filters', async () => {
    await signIn(page, h.platform.controlUrl, token);
    await nav(page, 'Calls').click();
    const rows = page.locator('tbody tr[data-call]');
    const status = page.getByTestId('calls-status');
    await status.filter({ hasText: 'Page 1: 50 calls' }).waitFor();
    assert.equal(await rows.first().getAttribute('data-call'), detailed);
    await assertAccessible(page, 'calls');
    await page.getByRole('button', { name: 'Older →' }).click();
    await status.filter({ hasText: 'Page 2: 50 calls' }).waitFor();
    await page.getByRole('button', { name: 'Older →' }).click();
    await status.filter({ hasText: 'Page 3: 21 calls' }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Older →' }).isDisabled(), true);
    await page.getByRole('button', { name: '← Newer' }).click();
    await page.getByRole('button', { name: '← Newer' }).click();
    await status.filter({ hasText: 'Page 1: 50 calls' }).waitFor();
    assert.equal(await rows.first().getAttribute('data-call'), detailed);

    const firstIds = async () => ((await page.evaluate("[...document.querySelectorAll('tbody tr[data-call]')].map((tr) => tr.getAttribute('data-call'))")) as string[]).slice(0, 50);
    const api = (q: string) => h.api<CallPage>('GET', `${calls}?${q}`).then((r) => r.body.items.map((c) => c.id));
    const settles = async (want: string[]) => {
      for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
        if (JSON.stringify(await firstIds()) === JSON.stringify(want)) return;
      }
      assert.deepEqual(await firstIds(), want);
    };
    await page.getByLabel('Sort').selectOption('duration:desc');
    await settles(await api('sort=duration&order=desc'));
    await page.getByLabel('Sort').selectOption('startedAt:desc');
    await page.getByLabel('Number').fill('+91980000003');
    await settles(await api('number=%2B91980000003'));
    assert.equal(await rows.count(), 12);
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await page.getByLabel('Direction').selectOption('web');
    await settles(await api('direction=web'));
    await page.getByLabel('Direction').selectOption('');
    await page.getByLabel('End reason').fill('transferred');
    await settles(await api('endReason=transferred'));
    await page.getByLabel('End reason').fill('');
    await page.getByLabel('Disposition').fill('to_desk');
    await settles(await api('disposition=to_desk'));
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await page.getByLabel('From', { exact: true }).fill('2026-01-11');
    await page.getByLabel('To (through)').fill('2026-01-11');
    await settles([detailed]);
    await h.shot(page, '16-calls');
  });

  it('on a phone-sized screen each stacked cell keeps its column name', async () => {
    const phone = await h.chromium.browser.newPage({ viewport: { width: 390, height: 844 } });
    try {
      await signIn(phone, h.platform.controlUrl, token);
      await nav(phone, 'Calls').click();
      await phone.getByTestId('calls-status').filter({ hasText: 'Page 1' }).waitFor();
      const labels = await phone.evaluate("[...document.querySelector('tbody tr[data-call]').querySelectorAll('td')].map((td) => getComputedStyle(td, '::before').content)");
      assert.deepEqual(labels, ['"Started: "', '"Direction: "', '"Number: "', '"Other party: "', '"Duration: "', '"Disposition: "', '"End reason: "', '"Status: "']);
      assert.ok(Number(await phone.evaluate('document.documentElement.scrollWidth - window.innerWidth')) <= 0);
      await assertAccessible(phone, 'calls, 390 px wide');
      await h.shot(phone, '19-calls-phone');
    } finally {
      await phone.close();
    }
  });

  it('the call page shows variables, the keyed turn, the SIP facts and the end reason the record holds', async () => {
    await page.goto(`${h.platform.controlUrl}/t/acme/calls/${detailed}`);
    await page.getByTestId('variables').getByRole('row', { name: 'order_number 123456' }).waitFor();
    const keyed = page.getByTestId('transcript').locator('li.caller');
    assert.match((await keyed.textContent()) ?? '', /Keyed\s*123456/);
    assert.equal(await page.getByTestId('transcript').locator('li.agent .keyed').count(), 0);
    const sip = (await page.getByTestId('sip-facts').textContent()) ?? '';
    for (const fact of ['a84b4c76e66710@pc33.example.com', '200', '192.0.2.10 (UDP)', 'PCMA']) assert.ok(sip.includes(fact), `${fact} not in ${sip}`);
    const path = (await page.getByRole('region', { name: 'Path through the recipe' }).textContent()) ?? '';
    assert.match(path, /to_desk \(transfer\) \(transferred\)/);
    assert.doesNotMatch(path, /callerHangup/);
    await assertAccessible(page, 'call detail');
    await h.shot(page, '20-call-detail');
  });

  it('downloads the Master Report through a signed link the browser saves itself', async () => {
    const requests: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    await nav(page, 'Reports').click();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download Master Report (CSV)' }).click()]);
    const stream = await download.createReadStream();
    let csv = '';
    for await (const chunk of stream) csv += (chunk as Buffer).toString('utf8');
    assert.equal(csv.trim().split('\n').length, 122, 'a header and 121 calls');
    await page.getByRole('status').filter({ hasText: 'Download started: 121 calls' }).waitFor();
    // The page asked for a link; the CSV itself went to the browser's download, not to a fetch.
    assert.ok(requests.some((u) => u.includes('/reports/master.csv/links')));
    assert.ok(!requests.some((u) => u.includes('/reports/master.csv?')));
    await assertAccessible(page, 'reports');
    await h.shot(page, '17-reports');
    // The link is the credential: tampered or expired, it is refused.
    const link = await h.api<{ url: string; expiresAt: string; calls: number }>('POST', '/v1/tenants/acme/reports/master.csv/links?direction=web');
    assert.equal(link.status, 201);
    assert.equal(link.body.calls, 10);
    const good = await fetch(`${h.platform.controlUrl}${link.body.url}`);
    assert.equal(good.status, 200);
    assert.match(good.headers.get('content-disposition') ?? '', /attachment; filename="master-report-acme-/);
    assert.equal((await good.text()).trim().split('\n').length, 11);
    const tampered = await fetch(`${h.platform.controlUrl}${link.body.url.slice(0, -2)}xx`);
    assert.equal(tampered.status, 401);
    const bad = await h.api<{ issues: Array<{ path: string }> }>('POST', '/v1/tenants/acme/reports/master.csv/links?bom=maybe');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.issues[0]?.path, 'bom');
  });

  it('a web call whose WSS handshake fails says to accept the certificate, with a link to its page', async () => {
    const recipe = {
      name: 'hello',
      startBlockId: 'hi',
      blocks: [
        { id: 'hi', type: 'message', settings: { text: 'Hello.' } },
        { id: 'bye', type: 'close', settings: {} },
      ],
      connections: [{ from: 'hi', exit: 'next', to: 'bye' }],
    };
    assert.equal((await h.api('POST', '/v1/tenants/acme/recipes', recipe)).status, 201);
    await nav(page, 'Web call').click();
    await page.getByLabel('Agent to call').selectOption({ label: 'Recipe hello' });
    await assertAccessible(page, 'web call');
    // This Chromium does not take the gateway's self-signed certificate: the handshake fails.
    await page.getByRole('button', { name: 'Call this agent' }).click();
    const hint = page.getByTestId('certificate-hint');
    await hint.waitFor({ timeout: 60_000 });
    const href = await hint.getByRole('link').getAttribute('href');
    assert.equal(href, `https://127.0.0.1:${wssPort}/`);
    assert.match((await hint.textContent()) ?? '', /accept the certificate/);
    await assertAccessible(page, 'web call, certificate hint shown');
    await h.shot(page, '21-web-call-certificate-hint');
  });
});
