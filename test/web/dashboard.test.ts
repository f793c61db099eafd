import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { FakeChatCompletionsServer } from '../fakes/fake-chat-completions.js';
import { startSippUas, type SippUas } from '../gateway/outbound-sipp-uas.js';
import { fill, GatedInsights, nav, sendMessage } from './campaign-flow.js';
import { signIn, startDashboardHarness, type DashboardHarness } from './dashboard-harness.js';

/**
 * The dashboard in a real browser (Debian's Chromium under playwright-core) against the real
 * platform process: every page reads and writes through the management API, and the API's own
 * validation errors are what the page shows.
 */
describe('web dashboard in Chromium', function () {
  this.timeout(180_000);
  let h: DashboardHarness;
  let page: Page;
  let token: string;
  let llm: FakeChatCompletionsServer;
  let uas: SippUas | undefined;
  const tenant = 'acme';
  const number = '+914440001001';

  before(async () => {
    llm = await new FakeChatCompletionsServer().start();
    h = await startDashboardHarness();
    assert.equal((await h.api('POST', '/v1/tenants', { clientId: tenant, name: 'Acme Ltd', timezone: 'Asia/Kolkata' })).status, 201);
    const issued = await h.api<{ token: string }>('POST', `/v1/tenants/${tenant}/tokens`, { name: 'dashboard', scopes: ['management'] });
    assert.equal(issued.status, 201);
    token = issued.body.token;
    page = await h.chromium.browser.newPage({ viewport: { width: 1280, height: 900 } });
  });
  after(async () => {
    uas?.stop();
    await llm?.stop();
    if (h) {
      process.stdout.write(`      dashboard screenshots: ${h.screenshots}\n`);
      await h.close();
    }
  });

  it('serves the app at / with cache headers, client routes fall back to it, the API paths do not', async () => {
    const root = await fetch(`${h.platform.controlUrl}/`);
    assert.equal(root.status, 200);
    assert.equal(root.headers.get('cache-control'), 'no-cache');
    const html = await root.text();
    const asset = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    assert.ok(asset, html);
    const script = await fetch(`${h.platform.controlUrl}${asset}`);
    assert.equal(script.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    const route = await fetch(`${h.platform.controlUrl}/t/acme/calls`, { headers: { Accept: 'text/html' } });
    assert.equal(route.status, 200);
    assert.equal(await route.text(), html);
    const api = await fetch(`${h.platform.controlUrl}/v1/no-such-thing`, { headers: { Accept: 'text/html' } });
    assert.equal(api.status, 404);
    assert.equal(((await api.json()) as { code: string }).code, 'bad_route');
    assert.equal((await fetch(`${h.platform.controlUrl}/healthz`)).status, 200);
    assert.equal((await fetch(`${h.platform.controlUrl}/assets/missing.js`)).status, 404);
  });

  it('refuses a wrong token on the sign-in page in words for a person, not the API\'s', async () => {
    await page.goto(`${h.platform.controlUrl}/`);
    await h.shot(page, '01-sign-in');
    await page.getByLabel('API token').fill('not-a-real-token-000000000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'That token was not accepted' });
    await alert.waitFor();
    assert.doesNotMatch((await alert.textContent()) ?? '', /Authorization|Bearer/);
  });

  it('the operator token lists tenants to pick from', async () => {
    await page.goto(`${h.platform.controlUrl}/`);
    await page.getByLabel('API token').fill(h.platform.operatorToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('1 tenant shown').waitFor();
    await page.getByRole('link', { name: /Acme Ltd/ }).click();
    await page.getByRole('heading', { name: 'Recipes' }).waitFor();
    await h.shot(page, '02-tenant-picked');
    await page.getByRole('button', { name: 'Sign out' }).click();
  });

  it('builds a recipe in the graph editor: the API\'s validation error beside the field, then publish', async () => {
    await signIn(page, h.platform.controlUrl, token);
    await page.getByLabel('New recipe name').fill('web-flow');
    await page.getByRole('button', { name: 'Create and open' }).click();
    await page.getByRole('button', { name: /^Start block greet Message/ }).waitFor();
    // An empty Message text: the API refuses it, and says why next to the field.
    await page.getByLabel('Text (may use {{variable}})').fill('');
    await page.getByRole('button', { name: 'Publish' }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'blocks[0].settings.text' });
    await alert.waitFor();
    const fieldIssue = await page.locator('.field.invalid .issue').first().textContent();
    assert.ok(fieldIssue && fieldIssue.length > 0);
    assert.ok((await alert.textContent())?.includes(fieldIssue), `${fieldIssue} not in the API's issues`);
    await page.getByRole('button', { name: /greet.*has errors/ }).waitFor();
    await h.shot(page, '03-recipe-validation-error');
    await page.getByLabel('Text (may use {{variable}})').fill('Hello {{name}}, this is Acme calling about your order.');
    // A new Message block between greet and bye, connected through the exit selects (keyboard).
    await page.getByLabel('New block type').selectOption('message');
    await page.getByLabel('New block id').fill('details');
    await page.getByRole('button', { name: 'Add block' }).click();
    await page.getByLabel('Text (may use {{variable}})').fill('Your parcel arrives tomorrow.');
    await page.getByLabel('Next leads to').selectOption('bye');
    await page.getByRole('button', { name: /^Start block greet/ }).focus();
    await page.keyboard.press('Enter');
    await page.getByLabel('Next leads to').selectOption('details');
    await page.getByRole('button', { name: 'Publish' }).click();
    await page.getByRole('status').filter({ hasText: 'Published at' }).waitFor();
    await h.shot(page, '04-recipe-graph');
    const recipes = await h.api<{ items: Array<{ spec: { name: string; blocks: Array<{ id: string; settings: { text?: string } }>; connections: unknown[] } }> }>('GET', `/v1/tenants/${tenant}/recipes`);
    const saved = recipes.body.items.find((r) => r.spec.name === 'web-flow');
    assert.ok(saved);
    assert.deepEqual(saved.spec.blocks.map((b) => b.id), ['greet', 'bye', 'details']);
    const edges = (saved.spec.connections as Array<{ from: string; exit: string; to: string }>).map((c) => `${c.from}.${c.exit}->${c.to}`).sort();
    assert.deepEqual(edges, ['details.next->bye', 'greet.next->details']);
  });

  it('sets up a SIP trunk (with the service\'s signalling address), a number on it, a word and a favourite voice', async () => {
    uas = await startSippUas('uas-ring-4s-answer-expect-bye.xml', { timeoutMs: 120_000 });
    const base = `${h.platform.controlUrl}/t/${tenant}`;
    await nav(page, 'SIP trunks').click();
    await page.getByTestId('signalling-address').filter({ hasText: '127.0.0.1' }).waitFor();
    await fill(page, 'Name', 'carrier');
    await fill(page, 'Termination addresses (IP or FQDN, comma separated)', '127.0.0.61');
    await fill(page, 'Outbound address', '127.0.0.1');
    await fill(page, 'Outbound port', String(uas.port));
    await fill(page, 'SIP username', 'acme-out');
    await fill(page, 'SIP password', 'trunk-secret-1');
    await page.getByRole('button', { name: 'Add trunk' }).click();
    await page.getByRole('cell', { name: 'carrier', exact: true }).waitFor();
    await h.shot(page, '05-sip-trunks');

    await nav(page, 'Phone numbers').click();
    // The API's own message for a number that is no E.164, beside the field.
    await fill(page, 'Phone number (E.164)', '12ab');
    await page.getByLabel('Recipe', { exact: true }).selectOption('web-flow');
    await page.getByRole('button', { name: 'Add number' }).click();
    await page.locator('.field.invalid').filter({ hasText: 'Phone number (E.164)' }).waitFor();
    await fill(page, 'Phone number (E.164)', number);
    await page.getByLabel('Provider', { exact: true }).selectOption('customSipTrunk');
    await page.getByLabel('SIP trunk', { exact: true }).selectOption('carrier');
    await fill(page, 'Language', 'en-US');
    await page.getByRole('button', { name: 'Add number' }).click();
    await page.getByRole('cell', { name: number, exact: true }).waitFor();
    await h.shot(page, '06-phone-numbers');

    await nav(page, 'Speech profiles').click();
    await page.getByLabel('Gender', { exact: true }).selectOption('female');
    // The filtered list, not the one shown before it arrives; the star's PATCH answered before the
    // favourites-only list is asked for (else that list may be read before the star is saved).
    // (Locators, not waitForFunction: the page's CSP refuses the string it would evaluate.)
    const genderCells = page.locator('tbody tr td:nth-child(4)');
    await genderCells.filter({ hasText: /^male$/ }).first().waitFor({ state: 'detached' });
    await genderCells.filter({ hasText: /^female$/ }).first().waitFor();
    await page.getByRole('button', { name: /^Favourite / }).first().click();
    await page.getByRole('button', { name: /^Favourite /, pressed: true }).first().waitFor();
    await page.getByLabel('Favourites only').check();
    await page.getByRole('button', { name: /^Favourite / , pressed: true }).first().waitFor();
    const favourites = await h.api<{ items: Array<{ spec: { favourite: boolean } }> }>('GET', `/v1/tenants/${tenant}/speech-profiles?favourite=true`);
    assert.equal(favourites.body.items.length, 1);
    await h.shot(page, '07-speech-profiles');

    await nav(page, 'Word management').click();
    await fill(page, 'Enter word', 'Acme');
    await fill(page, 'Enter phonetic pronunciation', 'ak-mee');
    await page.getByRole('button', { name: 'Add word' }).click();
    await page.getByRole('cell', { name: 'ak-mee' }).waitFor();
    await h.shot(page, '08-word-management');
    assert.ok(page.url().startsWith(base));
  });

  it('publishes a campaign and follows a SendMessage call from ringing to "Analyzing Your Call..." to its insights', async () => {
    // The recipe's post-call insight parameter, in its global settings.
    await nav(page, 'Recipes').click();
    await page.getByRole('link', { name: 'web-flow' }).click();
    await page.getByText('Global settings and post-call insights (JSON)').click();
    const settings = page.getByLabel('Global settings of the recipe as JSON');
    const current = JSON.parse((await settings.inputValue()) || '{}') as Record<string, unknown>;
    await settings.fill(JSON.stringify({ ...current, insights: [{ name: 'delivery_ok', description: 'Did the customer accept the delivery?', type: 'boolean' }] }, null, 2));
    await settings.blur();
    await page.getByRole('button', { name: 'Publish' }).click();
    await page.getByRole('status').filter({ hasText: 'Published at' }).waitFor();

    await nav(page, 'Campaigns').click();
    await fill(page, 'Campaign name', 'Delivery reminders');
    await page.getByLabel('Voice integration (phone number)').selectOption(number);
    await page.getByLabel('Campaign recipe').selectOption('web-flow');
    await fill(page, 'Ring duration (15-30 s)', '40');
    await page.getByRole('button', { name: 'Create campaign' }).click();
    await page.locator('.field.invalid').filter({ hasText: 'Ring duration' }).waitFor();
    await fill(page, 'Ring duration (15-30 s)', '20');
    await page.getByRole('button', { name: 'Create campaign' }).click();
    await page.getByRole('button', { name: 'Publish Delivery reminders' }).click();
    // Created: the form is empty again for the next campaign.
    assert.equal(await page.getByLabel('Campaign name').inputValue(), '');
    await page.getByRole('button', { name: 'Unpublish Delivery reminders' }).waitFor();
    const campaignId = (await page.getByTestId('campaign-id').textContent()) ?? '';
    const snippet = (await page.getByTestId('send-message-snippet').textContent()) ?? '';
    assert.ok(snippet.includes(`http://${tenant}.localhost:${new URL(h.platform.controlUrl).port}/api/v1/Campaign/SendMessage`), snippet);
    assert.ok(snippet.includes(campaignId));
    // The example schedules a call in the future (tomorrow 10:30 by the browser's calendar).
    const scheduled = /"Time":"([^"]+)"/.exec(snippet)?.[1] ?? '';
    assert.ok(Date.parse(scheduled) > Number(await page.evaluate('Date.now()')), `SendMessage example time ${scheduled} is not in the future`);
    await h.shot(page, '09-campaigns');

    // The campaign token, issued on the tokens page (shown once).
    await nav(page, 'API tokens').click();
    await fill(page, 'Token name', 'crm');
    await page.getByRole('button', { name: 'Issue token' }).click();
    const campaignToken = ((await page.getByTestId('issued-token').textContent()) ?? '').trim();
    await h.shot(page, '12-api-tokens');

    // The tenant's model answers insights only when let through, so "Analyzing" can be watched.
    const insights = new GatedInsights(llm, { delivery_ok: true });
    const patched = await h.api('PATCH', `/v1/tenants/${tenant}`, { settings: { llm: { provider: 'openaiCompatible', baseUrl: llm.baseUrl, model: 'insights-test', apiKey: 'sk-test-key-0001' } } });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    const messageId = await sendMessage(h, campaignToken, campaignId);

    await nav(page, 'Campaigns').click();
    await page.getByRole('button', { name: 'Delivery reminders', exact: true }).click();
    await fill(page, 'message_id', messageId);
    await page.getByRole('button', { name: 'Follow' }).click();
    const status = page.getByTestId('message-status');
    await status.filter({ hasText: 'ringing' }).waitFor({ timeout: 60_000 });
    await h.shot(page, '13-message-ringing');
    await status.filter({ hasText: 'completed' }).waitFor({ timeout: 90_000 });
    await page.getByRole('link', { name: 'Open call' }).click();
    const callStatus = page.getByTestId('call-status');
    await callStatus.filter({ hasText: 'Analyzing Your Call...' }).waitFor({ timeout: 30_000 });
    await h.shot(page, '14-call-analyzing');
    insights.open();
    await callStatus.filter({ hasText: 'Insights ready' }).waitFor({ timeout: 60_000 });
    await page.getByTestId('insights').getByRole('cell', { name: 'true' }).waitFor();
    assert.equal(await page.getByTestId('disposition').textContent(), 'done');
    await page.getByTestId('recording').waitFor();
    await h.shot(page, '15-call-insights');
    const sipp = await uas!.done;
    assert.equal(sipp.exitCode, 0, `SIPp: ${sipp.errors}`);

    await nav(page, 'Calls').click();
    await page.getByRole('cell', { name: 'Insights ready' }).waitFor();
    await h.shot(page, '16-calls');
  });

  it('downloads the Master Report with a column per insight parameter', async () => {
    await nav(page, 'Reports').click();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download Master Report (CSV)' }).click()]);
    const csv = await new Promise<string>((resolve, reject) => {
      void download.createReadStream().then((stream) => {
        let text = '';
        stream.on('data', (c: Buffer) => (text += c.toString('utf8')));
        stream.on('end', () => resolve(text));
        stream.on('error', reject);
      }, reject);
    });
    assert.match(csv.split('\n')[0] ?? '', /analysis\.delivery_ok/);
    assert.equal(csv.trim().split('\n').length, 2, csv);
    await page.getByRole('status').filter({ hasText: 'Download started: 1 call.' }).waitFor();
    await h.shot(page, '17-reports');
  });

  it('is keyboard reachable and fits a phone-sized screen without sideways scrolling', async () => {
    const phone = await h.chromium.browser.newPage({ viewport: { width: 390, height: 844 } });
    try {
      await signIn(phone, h.platform.controlUrl, token);
      // Each page moves focus to its main region; the navigation is right before it.
      const focused = (): Promise<unknown> => phone.evaluate('document.activeElement && (document.activeElement.id || document.activeElement.textContent)');
      assert.equal(await focused(), 'main');
      await phone.keyboard.press('Shift+Tab');
      assert.equal(await focused(), 'Sign out');
      await phone.keyboard.press('Shift+Tab');
      assert.equal(await focused(), 'Settings');
      await phone.keyboard.press('Shift+Tab');
      assert.equal(await focused(), 'API tokens');
      await phone.keyboard.press('Enter');
      await phone.getByRole('heading', { name: 'API tokens' }).waitFor();
      // Tab from the page start reaches its first control, inside the page.
      await phone.keyboard.press('Tab');
      assert.match(String(await phone.evaluate("document.activeElement && document.activeElement.closest('#main') ? document.activeElement.tagName : 'outside'")), /^(BUTTON|INPUT|SELECT|A|TEXTAREA)$/);
      for (const link of ['Calls', 'Campaigns', 'Recipes']) {
        await nav(phone, link).click();
        await phone.getByRole('heading', { name: link }).first().waitFor();
        const overflow = Number(await phone.evaluate('document.documentElement.scrollWidth - window.innerWidth'));
        assert.ok(overflow <= 0, `${link} scrolls sideways by ${overflow} px on a 390 px screen`);
      }
      await h.shot(phone, '18-phone-sized-recipes');
    } finally {
      await phone.close();
    }
  });
});
