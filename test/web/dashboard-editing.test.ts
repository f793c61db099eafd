import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { assertAccessible } from './axe.js';
import { fill, nav } from './campaign-flow.js';
import { signIn, startDashboardHarness, type DashboardHarness } from './dashboard-harness.js';

/** Four columns, an Ask block with two exits: wider than the graph's box at 1280 px. */
const wideRecipe = {
  name: 'orders',
  startBlockId: 'greet',
  blocks: [
    { id: 'greet', type: 'message', settings: { text: 'Hello, this is Acme.' } },
    { id: 'ask_order', type: 'ask', settings: { prompt: 'What is your order number?', variables: [{ name: 'order_number', type: 'text', description: 'the order number' }] } },
    { id: 'lookup', type: 'message', settings: { text: 'Thank you, one moment.' } },
    { id: 'sorry', type: 'close', settings: { closingScript: 'Sorry, goodbye.' } },
    { id: 'bye', type: 'close', settings: { closingScript: 'Goodbye.' } },
  ],
  connections: [
    { from: 'greet', exit: 'next', to: 'ask_order' },
    { from: 'ask_order', exit: 'next', to: 'lookup' },
    { from: 'ask_order', exit: 'fallback', to: 'sorry' },
    { from: 'lookup', exit: 'next', to: 'bye' },
  ],
};

/** Every block and every port of the graph lies inside the graph's visible box. */
async function everythingInView(page: Page): Promise<void> {
  const outside = await page.evaluate(`(() => {
    const box = document.querySelector('.graph-scroll').getBoundingClientRect();
    const parts = [...document.querySelectorAll('.graph [data-block], .graph circle.port')];
    return { count: parts.length, outside: parts.filter((el) => {
      const r = el.getBoundingClientRect();
      return r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1 || r.bottom > box.bottom + 1;
    }).map((el) => el.getAttribute('data-block') || 'port of ' + el.closest('[data-block]').getAttribute('data-block')) };
  })()`);
  const result = outside as { count: number; outside: string[] };
  assert.equal(result.count, 5 + 4, 'five blocks and four ports');
  assert.deepEqual(result.outside, [], 'out of view');
}

/**
 * Issue 29, editing as operators do every day: a recipe graph wider than its box (zoom, fit, pan,
 * at 1280x800 and 390 px), unsaved edits guarded, a refused Publish that keeps the draft, the
 * tenant settings page with write-only secrets, numbers and trunks edited in place; each page
 * with axe-core and no serious violation.
 */
describe('dashboard in Chromium: recipe graph, guards, settings, editing in place', function () {
  this.timeout(180_000);
  let h: DashboardHarness;
  let page: Page;
  let token: string;
  let recipeId: string;

  before(async () => {
    h = await startDashboardHarness();
    assert.equal((await h.api('POST', '/v1/tenants', { clientId: 'acme', name: 'Acme Ltd', timezone: 'Asia/Kolkata' })).status, 201);
    token = (await h.api<{ token: string }>('POST', '/v1/tenants/acme/tokens', { name: 'dashboard', scopes: ['management'] })).body.token;
    const created = await h.api<{ id: string }>('POST', '/v1/tenants/acme/recipes', wideRecipe);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    recipeId = created.body.id;
    page = await h.chromium.browser.newPage({ viewport: { width: 1280, height: 800 } });
  });
  after(async () => {
    if (h) await h.close();
  });

  it('every page has no serious accessibility violation (axe-core)', async () => {
    await page.goto(`${h.platform.controlUrl}/`);
    await assertAccessible(page, 'sign-in');
    await page.getByLabel('API token').fill(h.platform.operatorToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('1 tenant shown').waitFor();
    await assertAccessible(page, 'tenants');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(page, h.platform.controlUrl, token);
    for (const [link, heading] of [['Recipes', 'Recipes'], ['Phone numbers', 'Phone numbers'], ['SIP trunks', 'SIP trunks'], ['Speech profiles', 'Speech profiles'], ['Word management', 'Word management'], ['Campaigns', 'Campaigns'], ['API tokens', 'API tokens'], ['Settings', 'Settings']] as const) {
      await nav(page, link).click();
      await page.getByRole('heading', { name: heading, exact: true }).waitFor();
      await page.waitForLoadState('networkidle');
      await assertAccessible(page, link);
    }
  });

  it('the graph fits its box at 1280x800, zooms to 100% with scrollbars, and pans by dragging', async () => {
    await page.goto(`${h.platform.controlUrl}/t/acme/recipes/${recipeId}`);
    await page.getByRole('button', { name: /^Start block greet/ }).waitFor();
    await everythingInView(page);
    await assertAccessible(page, 'recipe editor');
    await h.shot(page, '04-recipe-graph');
    await page.getByRole('button', { name: '100%' }).click();
    await page.getByTestId('zoom').filter({ hasText: '100%' }).waitFor();
    const scroll = page.locator('.graph-scroll');
    const bars = (await page.evaluate("(() => { const el = document.querySelector('.graph-scroll'); return { wider: el.scrollWidth > el.clientWidth, bar: el.offsetHeight - el.clientHeight }; })()")) as { wider: boolean; bar: number };
    assert.ok(bars.wider, 'at 100% the graph is wider than its box');
    assert.ok(bars.bar > 0, 'the horizontal scrollbar is shown');
    const box = (await scroll.boundingBox())!;
    // From the empty gap between the first two columns, below the edges, 200 px to the left.
    await page.mouse.move(box.x + 220, box.y + 180);
    await page.mouse.down();
    await page.mouse.move(box.x + 20, box.y + 180, { steps: 8 });
    await page.mouse.up();
    const panned = (await page.evaluate("(() => { const el = document.querySelector('.graph-scroll'); return { left: el.scrollLeft, max: el.scrollWidth - el.clientWidth }; })()")) as { left: number; max: number };
    assert.ok(panned.left > 100, `dragging the background panned the graph: ${JSON.stringify(panned)} ${JSON.stringify(box)}`);
    await page.getByRole('button', { name: 'Zoom in' }).click();
    await page.getByTestId('zoom').filter({ hasText: '125%' }).waitFor();
    await page.getByRole('button', { name: 'Fit' }).click();
    await everythingInView(page);
  });

  it('on a 390 px screen Fit brings every block and port into view', async () => {
    const phone = await h.chromium.browser.newPage({ viewport: { width: 390, height: 844 } });
    try {
      await signIn(phone, h.platform.controlUrl, token);
      await phone.goto(`${h.platform.controlUrl}/t/acme/recipes/${recipeId}`);
      await phone.getByRole('button', { name: /^Start block greet/ }).waitFor();
      await phone.getByRole('button', { name: 'Fit' }).click();
      await everythingInView(phone);
      assert.ok(Number(await phone.evaluate('document.documentElement.scrollWidth - window.innerWidth')) <= 0);
      await h.shot(phone, '22-recipe-graph-phone');
    } finally {
      await phone.close();
    }
  });

  it('guards unsaved edits (links and reload), and a refused Publish keeps the draft', async () => {
    const status = page.getByRole('status').filter({ hasText: /Unsaved changes|Published|Not published/ }).first();
    await page.getByLabel('Recipe name').fill('orders-v2');
    await status.filter({ hasText: 'Unsaved changes' }).waitFor();
    // Reload or close: the page asks (beforeunload is cancelled).
    assert.equal(await page.evaluate("(() => { const e = new Event('beforeunload', { cancelable: true }); window.dispatchEvent(e); return e.defaultPrevented; })()"), true);
    // A link: the question comes up; staying keeps the page and the edit.
    const questions: string[] = [];
    page.once('dialog', (d) => {
      questions.push(d.message());
      void d.dismiss();
    });
    await nav(page, 'Calls').click();
    assert.match(questions[0] ?? '', /unpublished changes/);
    assert.match(page.url(), /\/recipes\//);
    assert.equal(await page.getByLabel('Recipe name').inputValue(), 'orders-v2');

    // Refused: the Message text is empty. The draft stays; a block added after it is kept.
    await page.getByRole('button', { name: /^Start block greet/ }).click();
    await page.getByLabel('Text (may use {{variable}})').fill('');
    await page.getByRole('button', { name: 'Publish' }).click();
    await page.getByRole('alert').filter({ hasText: 'blocks[0].settings.text' }).waitFor();
    await page.getByLabel('New block type').selectOption('message');
    await page.getByLabel('New block id').fill('bye');
    await page.getByRole('button', { name: 'Add block' }).click();
    await page.locator('.field.invalid').filter({ hasText: 'exists already' }).waitFor();
    await page.getByLabel('New block id').fill('extra');
    await page.getByRole('button', { name: 'Add block' }).click();
    await page.locator('.graph [data-block="extra"]').waitFor();
    await page.getByLabel('Text (may use {{variable}})').fill('One more thing.');
    await page.getByLabel('Next leads to').selectOption('bye');
    await page.getByRole('button', { name: /^Block lookup/ }).click();
    await page.getByLabel('Next leads to').selectOption('extra');
    await page.getByRole('button', { name: /^Start block greet/ }).click();
    await page.getByLabel('Text (may use {{variable}})').fill('Hello again.');
    await page.getByRole('button', { name: 'Publish' }).click();
    await page.getByRole('status').filter({ hasText: 'Published at' }).waitFor();
    const saved = await h.api<{ spec: { name: string; blocks: Array<{ id: string }> } }>('GET', `/v1/tenants/acme/recipes/${recipeId}`);
    assert.equal(saved.body.spec.name, 'orders-v2');
    assert.ok(saved.body.spec.blocks.some((b) => b.id === 'extra'));
    // Published: nothing to lose, no question.
    await nav(page, 'Recipes').click();
    await page.getByRole('heading', { name: 'Recipes', exact: true }).waitFor();
  });

  it('the settings page saves speech, LLM, webhook and allowlist; secrets are write-only', async () => {
    await nav(page, 'Settings').click();
    const save = () => page.getByRole('button', { name: 'Save settings' }).click();
    const saved = () => page.getByRole('status').filter({ hasText: 'Saved at' }).waitFor();
    const invalid = (label: string) => page.locator('.field.invalid').filter({ hasText: label }).waitFor();
    const secretState = (label: string) => page.getByTestId('secret-state').filter({ hasText: label });
    await fill(page, 'Webhook URL', 'not a url');
    await page.getByLabel('Webhook secret', { exact: true }).fill('short');
    await save();
    await invalid('Webhook URL');
    await invalid('Webhook secret');
    await fill(page, 'Webhook URL', 'https://hooks.example.com/voice');
    await page.getByLabel('Webhook secret', { exact: true }).fill('a-long-webhook-secret-0001');
    await fill(page, 'Private hosts, addresses or CIDRs that API and Webhook blocks may reach (one per line)', 'bad entry!');
    await save();
    await invalid('Private hosts');
    await fill(page, 'Private hosts, addresses or CIDRs that API and Webhook blocks may reach (one per line)', '10.0.0.0/8\ncrm.internal');
    await page.getByLabel('Provider', { exact: true }).selectOption('openaiCompatible');
    await save();
    await invalid('Base URL');
    await fill(page, 'Base URL', 'http://127.0.0.1:9/v1');
    await fill(page, 'Model', 'acme-model');
    await page.getByLabel('LLM API key', { exact: true }).fill('sk-llm-key-0001');
    await page.getByLabel('Use Deepgram').check();
    await save();
    await invalid('Deepgram API key');
    await page.getByLabel('Deepgram API key', { exact: true }).fill('dg-key-0001');
    await save();
    await saved();
    await secretState('Webhook secret').filter({ hasText: 'set' }).filter({ hasNotText: 'not set' }).waitFor();
    await secretState('LLM API key').filter({ hasNotText: 'not set' }).waitFor();
    await secretState('Deepgram API key').filter({ hasNotText: 'not set' }).waitFor();
    await assertAccessible(page, 'settings');
    await h.shot(page, '23-settings');
    const tenant = await fetch(`${h.platform.controlUrl}/v1/tenants/acme`, { headers: { Authorization: `Bearer ${token}` } }).then((r) => r.text());
    for (const secret of ['a-long-webhook-secret-0001', 'sk-llm-key-0001', 'dg-key-0001']) assert.ok(!tenant.includes(secret), `${secret} came back from the API`);
    const settings = (JSON.parse(tenant) as { spec: { settings: Record<string, unknown> } }).spec.settings;
    assert.equal(settings['webhookUrl'], 'https://hooks.example.com/voice');
    assert.equal(settings['webhookSecret'], '********');
    assert.deepEqual(settings['ssrfAllowlist'], ['10.0.0.0/8', 'crm.internal']);
    // Clear the webhook secret: gone from the API, "not set" on the page.
    await page.getByRole('button', { name: 'Clear webhook secret' }).click();
    await secretState('Webhook secret').filter({ hasText: 'will be cleared on save' }).waitFor();
    await save();
    await secretState('Webhook secret').filter({ hasText: 'not set' }).waitFor();
    const after = await h.api<{ spec: { settings: Record<string, unknown> } }>('GET', '/v1/tenants/acme');
    assert.equal(after.body.spec.settings['webhookSecret'], undefined);
    assert.equal((after.body.spec.settings['llm'] as { apiKey: string }).apiKey, '********');
  });

  it('numbers and trunks are edited in place, with the API\'s issues at the fields', async () => {
    const trunk = await h.api<{ id: string }>('POST', '/v1/tenants/acme/sip-trunks', { name: 'carrier', inbound: { terminationAddresses: ['127.0.0.61'] }, outbound: { address: '127.0.0.1', port: 5080, username: 'acme-out', password: 'trunk-secret-1' } });
    assert.equal(trunk.status, 201, JSON.stringify(trunk.body));
    assert.equal((await h.api('POST', '/v1/tenants/acme/phone-numbers', { number: '+914440001001', recipe: 'orders-v2', provider: { type: 'customSipTrunk', trunk: 'carrier' }, language: 'en-IN' })).status, 201);
    await nav(page, 'SIP trunks').click();
    await page.getByRole('button', { name: 'Edit trunk carrier' }).click();
    const trunkForm = page.getByRole('form', { name: 'Edit trunk carrier' });
    const outbound = trunkForm.getByRole('group', { name: 'Outbound' });
    await outbound.getByLabel('Port', { exact: true }).fill('99999');
    await trunkForm.getByRole('button', { name: 'Save' }).click();
    await trunkForm.locator('.field.invalid').filter({ hasText: 'outbound.port must be between 1 and 65535' }).waitFor();
    await assertAccessible(page, 'SIP trunks, editing with an error at a field');
    await outbound.getByLabel('Port', { exact: true }).fill('5070');
    await h.shot(page, '24-trunk-edit');
    await trunkForm.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('cell', { name: '127.0.0.1:5070 udp' }).waitFor();
    const stored = await h.api<{ spec: { outbound: { port: number; password: string } } }>('GET', `/v1/tenants/acme/sip-trunks/${trunk.body.id}`);
    assert.equal(stored.body.spec.outbound.port, 5070);
    assert.equal(stored.body.spec.outbound.password, '********', 'the password was kept');

    await nav(page, 'Phone numbers').click();
    await page.getByRole('button', { name: 'Edit number +914440001001' }).click();
    const numberForm = page.getByRole('form', { name: 'Edit number +914440001001' });
    await numberForm.getByLabel('Language', { exact: true }).fill('hi-IN');
    await numberForm.getByLabel('Max Call Duration Minutes', { exact: true }).fill('99');
    await numberForm.getByRole('button', { name: 'Save' }).click();
    await numberForm.locator('.field.invalid').filter({ hasText: 'Max Call Duration Minutes' }).waitFor();
    await numberForm.getByLabel('Max Call Duration Minutes', { exact: true }).fill('15');
    await assertAccessible(page, 'phone numbers, editing');
    await h.shot(page, '25-number-edit');
    await numberForm.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('cell', { name: 'hi-IN', exact: true }).waitFor();
  });
});
