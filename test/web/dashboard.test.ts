import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
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
  const tenant = 'acme';

  before(async () => {
    h = await startDashboardHarness();
    assert.equal((await h.api('POST', '/v1/tenants', { clientId: tenant, name: 'Acme Ltd', timezone: 'Asia/Kolkata' })).status, 201);
    const issued = await h.api<{ token: string }>('POST', `/v1/tenants/${tenant}/tokens`, { name: 'dashboard', scopes: ['management'] });
    assert.equal(issued.status, 201);
    token = issued.body.token;
    page = await h.chromium.browser.newPage({ viewport: { width: 1280, height: 900 } });
  });
  after(async () => {
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

  it('refuses a wrong token on the sign-in page with the API\'s message', async () => {
    await page.goto(`${h.platform.controlUrl}/`);
    await h.shot(page, '01-sign-in');
    await page.getByLabel('API token').fill('not-a-real-token-000000000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'Authentication required' }).waitFor();
  });

  it('the operator token lists tenants to pick from', async () => {
    await page.goto(`${h.platform.controlUrl}/`);
    await page.getByLabel('API token').fill(h.platform.operatorToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('link', { name: /Acme Ltd/ }).click();
    await page.getByRole('heading', { name: 'Recipes' }).waitFor();
    await h.shot(page, '02-tenant-picked');
    await page.getByRole('button', { name: 'Sign out' }).click();
  });

  it('builds a recipe in the graph editor: the API\'s validation error beside the field, then publish', async () => {
    await signIn(page, h.platform.controlUrl, token);
    await page.getByLabel('New recipe name').fill('web-flow');
    await page.getByRole('button', { name: 'Create and open' }).click();
    await page.getByRole('button', { name: /^Start block greet, Message/ }).waitFor();
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
});
