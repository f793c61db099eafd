import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { expectSippUasSuccess, startSippUas, type SippUas } from '../gateway/outbound-sipp-uas.js';
import { nav } from './campaign-flow.js';
import { signIn, startDashboardHarness, type DashboardHarness } from './dashboard-harness.js';

/**
 * A registering trunk end to end through the platform process as deployed: the trunk is created
 * over the management API, the gateway role registers it with a SIPp registrar (401, 423, 200),
 * the API and the dashboard's trunks page show it registered, and stopping the platform removes
 * the binding (Expires: 0) during its drain.
 */
describe('a registering trunk in the platform process and on the dashboard', function () {
  this.timeout(240_000);
  let h: DashboardHarness | undefined;
  let page: Page;
  let uas: SippUas | undefined;
  const tenant = 'regco';

  before(async () => {
    uas = await startSippUas('uas-register-expect-401-423-200.xml', { keys: { username: 'regco-sip', password: 'reg-secret-9', min_expires: '120' }, timeoutMs: 200_000 });
    h = await startDashboardHarness({ env: { SIP_REGISTRATION_POLL_MS: '1000' } });
    page = await h.chromium.browser.newPage({ viewport: { width: 1280, height: 900 } });
  });
  after(async () => {
    uas?.stop();
    if (h) {
      process.stdout.write(`      screenshots: ${h.screenshots}\n`);
      await h.close();
    }
  });

  it('registers the trunk, shows it registered in the API and on the trunks page, and un-registers when the platform stops', async () => {
    const api = h as DashboardHarness;
    assert.equal((await api.api('POST', '/v1/tenants', { clientId: tenant, name: 'Reg Co' })).status, 201);
    const issued = await api.api<{ token: string }>('POST', `/v1/tenants/${tenant}/tokens`, { name: 'dashboard', scopes: ['management'] });
    const created = await api.api('POST', `/v1/tenants/${tenant}/sip-trunks`, {
      name: 'registered-carrier',
      inbound: { terminationAddresses: [], dids: ['+914440003000'] },
      outbound: { username: 'regco-sip', password: 'reg-secret-9' },
      registration: { registrar: '127.0.0.1', port: uas?.port, domain: 'carrier.test', expiresSeconds: 60 },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));

    type Listed = { items: Array<{ trunk: string; state: string; expiresAt: string | null; lastError: string | null }> };
    const deadline = Date.now() + 60_000;
    let listed: Listed = { items: [] };
    while (listed.items[0]?.state !== 'registered' && Date.now() < deadline) {
      listed = (await api.api<Listed>('GET', `/v1/tenants/${tenant}/sip-trunk-registrations`, undefined, issued.body.token)).body;
      await new Promise((r) => setTimeout(r, 250));
    }
    assert.equal(listed.items[0]?.state, 'registered', JSON.stringify(listed));
    assert.equal(listed.items[0]?.trunk, 'registered-carrier');

    await signIn(page, api.platform.controlUrl, issued.body.token);
    await nav(page, 'SIP trunks').click();
    await page.getByRole('heading', { name: 'Registrations with carriers' }).waitFor();
    await page.getByTestId('registration-state').filter({ hasText: 'registered' }).waitFor();
    process.stdout.write(`      screenshot: ${await api.shot(page, 'trunk-registrations')}\n`);

    // SIGTERM: the drain removes the binding; the registrar's scenario ends only on that Expires: 0.
    await api.close();
    h = undefined;
    expectSippUasSuccess(await (uas as SippUas).done);
  });
});
