import assert from 'node:assert/strict';
import { metricsRegistry } from '../../core/metrics.js';
import { runSipp, waitFor } from '../helpers/sipp.js';
import { numbers, startGatewayFixture, type GatewayFixture } from './gateway-harness.js';
import { UdpPeer, sipRequest, statusLine } from './udp-peer.js';

/** One unlabelled gauge as Prometheus would scrape it. */
async function gaugeValue(name: string): Promise<number | undefined> {
  const metric = await metricsRegistry.getSingleMetric(name)?.get();
  return metric?.values[0]?.value;
}

/**
 * Issue 14, drain: new INVITEs and OPTIONS keep-alives are answered 503 with Retry-After (RFC
 * 3261 sec. 21.5.4), so a proxy or carrier sends elsewhere, while calls already up go on until
 * they end or the drain timeout passes, when they get a BYE. SIPp is the carrier.
 */
describe('gateway drain (SIPp)', function () {
  this.timeout(60_000);
  let fx: GatewayFixture;

  beforeEach(async () => {
    fx = await startGatewayFixture({ abuse: { retryAfterSeconds: 9 } }, undefined, 'pglite');
  });
  afterEach(async () => {
    await fx.close();
  });

  it('keeps a live call up, refuses new INVITEs and OPTIONS with 503 + Retry-After, and ends when the call does', async () => {
    // The caller holds the call for 4 s, then hangs up itself.
    const live = runSipp({ scenario: 'uac-invite-expect-200-caller-bye-after-pause.xml', target: fx.target, service: numbers.trunkDid, extraArgs: ['-d', '4000'], timeoutMs: 30_000 });
    await waitFor(() => fx.gateway.registry.size === 1, 10_000);
    assert.equal(await gaugeValue('vap_gateway_draining'), 0);

    const drained = fx.gateway.drain(30_000);
    assert.equal(fx.gateway.isDraining, true);
    assert.equal(await gaugeValue('vap_gateway_draining'), 1);
    assert.equal(await gaugeValue('vap_gateway_live_calls'), 1);

    const refused = await runSipp({ scenario: 'uac-invite-expect-503-retry-after.xml', target: fx.target, service: numbers.trunkDid, timeoutMs: 10_000 });
    assert.equal(refused.successful, 1, `a new INVITE during the drain is refused 503 with Retry-After: ${refused.errors}`);

    const peer = await UdpPeer.open();
    try {
      peer.send(fx.gateway.ports.UDP as number, sipRequest(peer, 'OPTIONS', { callId: 'keepalive-1' }));
      const options = await peer.wait(statusLine(503), 5000);
      assert.match(options.text, /\r\nRetry-After: 9\r\n/);
    } finally {
      peer.close();
    }

    assert.equal(fx.gateway.registry.size, 1, 'the live call is still up');
    const call = await live;
    assert.equal(call.successful, 1, `the caller's BYE ended the call normally: ${call.errors}`);
    const result = await drained;
    assert.equal(result.endedAtTimeout, 0);
    assert.equal(fx.handler.calls.length, 1, 'the refused INVITE never became a call');
    await waitFor(() => fx.handler.last()?.endReason !== undefined, 5000);
    assert.equal(fx.handler.last()?.endReason, 'remote-bye');
    assert.equal(await gaugeValue('vap_gateway_live_calls'), 0);
  });

  it('sends a BYE to a call still up at the drain timeout', async () => {
    // This caller never hangs up: it waits (15 s at most) for the gateway's BYE.
    const live = runSipp({ scenario: 'uac-invite-expect-200-gateway-bye.xml', target: fx.target, service: numbers.trunkDid, timeoutMs: 30_000 });
    await waitFor(() => fx.gateway.registry.size === 1, 10_000);
    const started = Date.now();
    const result = await fx.gateway.drain(1500);
    assert.equal(result.endedAtTimeout, 1);
    assert.ok(Date.now() - started >= 1400, 'the call went on until the drain timeout');
    const call = await live;
    assert.equal(call.successful, 1, `SIPp got the gateway's BYE: ${call.errors}`);
    assert.equal(fx.handler.last()?.endReason, 'drain-timeout');
    assert.equal(fx.gateway.registry.idle, true);
  });
});
