import assert from 'node:assert/strict';
import { forEachStore } from '../helpers/stores.js';
import { startManagementApp } from '../helpers/management-app.js';

/** `ops.metricsToken` and `ops.metricsOnAppPorts` on the control port (docs/operations.md, "Protecting /metrics"). */
forEachStore('/metrics on the control port: bearer token, or not served there at all', (store) => {
  it('is open by default', async () => {
    const h = await startManagementApp(store());
    try {
      const res = await fetch(`${h.server.url}/metrics`);
      assert.equal(res.status, 200);
      assert.match(await res.text(), /^# TYPE vap_build_info gauge$/m);
    } finally {
      await h.close();
    }
  });

  it('with ops.metricsToken: 401 without the bearer token or with another, 200 with it; probes stay open', async () => {
    const token = 'metrics-token-0123456789abcdef';
    const h = await startManagementApp(store(), {}, { config: { ops: { metricsToken: token } } });
    try {
      const refused = await fetch(`${h.server.url}/metrics`);
      assert.equal(refused.status, 401);
      assert.equal(refused.headers.get('www-authenticate'), 'Bearer realm="metrics"');
      assert.equal((await fetch(`${h.server.url}/metrics`, { headers: { Authorization: 'Bearer metrics-token-0123456789abcdeX' } })).status, 401);
      assert.equal((await fetch(`${h.server.url}/metrics`, { headers: { Authorization: `Basic ${token}` } })).status, 401);
      assert.equal((await fetch(`${h.server.url}/metrics`, { headers: { Authorization: `Bearer ${token}` } })).status, 200);
      assert.equal((await fetch(`${h.server.url}/healthz`)).status, 200);
    } finally {
      await h.close();
    }
  });

  it('with ops.metricsOnAppPorts false: not served on the control port (404), the API unaffected', async () => {
    const h = await startManagementApp(store(), {}, { config: { ops: { metricsOnAppPorts: false } } });
    try {
      assert.equal((await fetch(`${h.server.url}/metrics`)).status, 404);
      assert.equal((await fetch(`${h.server.url}/readyz`)).status, 200);
    } finally {
      await h.close();
    }
  });
});
