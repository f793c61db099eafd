import assert from 'node:assert/strict';
import { expectSippSuccess, runSipp, waitFor, type SippOptions, type SippResult } from '../helpers/sipp.js';
import { numbers, startGatewayFixture, type GatewayFixture } from './gateway-harness.js';

/**
 * RFC 4028 session timers on inbound calls, SIPp as the carrier. The gateway's Min-SE is 2 s here
 * (the configuration keeps the RFC's 90 s floor; only a test may go lower) so that refreshes and
 * expiry happen within seconds on the real clock.
 */
describe('gateway: RFC 4028 session timers with SIPp (inbound)', function () {
  this.timeout(60_000);
  let fx: GatewayFixture;

  before(async () => {
    fx = await startGatewayFixture({ sessionTimer: { intervalSeconds: 1800, minSeSeconds: 2 } });
  });
  after(async () => {
    await fx?.close();
  });

  const sipp = (options: Omit<SippOptions, 'target'>): Promise<SippResult> => runSipp({ target: fx.target, service: numbers.trunkDid, ...options });
  const ok = (r: SippResult): void => expectSippSuccess(r);

  it('answers Session-Expires 4;refresher=uas with Require: timer and refreshes with UPDATE at half the interval (sec. 9, 10)', async () => {
    const before = fx.handler.calls.length;
    const started = Date.now();
    ok(await sipp({ scenario: 'uac-session-timer-update-refresh.xml' }));
    // The UPDATE is due 2 s after the answer; SIPp hangs up 300 ms after answering it.
    assert.ok(Date.now() - started >= 2000, `call lasted ${Date.now() - started} ms`);
    const seen = fx.handler.calls[before];
    assert.ok(seen);
    await waitFor(() => seen.endReason !== undefined);
    assert.equal(seen.endReason, 'remote-bye');
  });

  it('sends BYE when the caller, as refresher, lets a 3 s session expire (sec. 10: interval - min(32, interval/3))', async () => {
    const before = fx.handler.calls.length;
    const started = Date.now();
    ok(await sipp({ scenario: 'uac-session-timer-expires-bye.xml' }));
    const elapsed = Date.now() - started;
    assert.ok(elapsed >= 2000 && elapsed < 5000, `BYE after ${elapsed} ms (due at 2 s after the answer)`);
    const seen = fx.handler.calls[before];
    assert.ok(seen);
    await waitFor(() => seen.endReason !== undefined);
    assert.equal(seen.endReason, 'session-expired');
    assert.equal(fx.gateway.registry.size, 0);
  });

  it('ends the session with BYE when its refresh UPDATE gets 408 (sec. 10)', async () => {
    const before = fx.handler.calls.length;
    ok(await sipp({ scenario: 'uac-session-timer-update-408-bye.xml' }));
    const seen = fx.handler.calls[before];
    assert.ok(seen);
    await waitFor(() => seen.endReason !== undefined);
    assert.equal(seen.endReason, 'session-refresh-failed');
  });

  it('refreshes by re-INVITE (with its SDP) when the caller refuses the refresh UPDATE 405, and the call goes on (sec. 10)', async () => {
    const before = fx.handler.calls.length;
    ok(await sipp({ scenario: 'uac-session-timer-update-405-reinvite.xml' }));
    const seen = fx.handler.calls[before];
    assert.ok(seen);
    await waitFor(() => seen.endReason !== undefined);
    // The caller's BYE ended it, not an expiry or a failed refresh.
    assert.equal(seen.endReason, 'remote-bye');
  });

  it('refuses Session-Expires: 1 with 422 and Min-SE, then takes the retry with that interval (sec. 6, 7.4)', async () => {
    const before = fx.handler.calls.length;
    const r = await sipp({ scenario: 'uac-session-timer-422-retry.xml' });
    ok(r);
    assert.equal(fx.handler.calls.length, before + 1, 'only the retried INVITE became a call');
  });
});
