import assert from 'node:assert/strict';
import { expectSippSuccess, runSipp, waitFor, type SippOptions, type SippResult } from '../helpers/sipp.js';
import { numbers, startGatewayFixture, type GatewayFixture } from './gateway-harness.js';

/**
 * Inbound routing and call handling against SIPp (Debian sip-tester) as the carrier, with the
 * gateway in-process on 127.0.0.1 and its directory on a private PostgreSQL.
 */
describe('gateway: inbound calls from SIPp', function () {
  this.timeout(60_000);
  let fx: GatewayFixture;

  before(async function () {
    // A burst of a whole test's calls: the gateway reads its socket when it gets the CPU, and in a
    // loaded suite run it read 120 of the 40/s calls at once, past the default burst of 100, and
    // refused the rest with 503 as the rule says. The rate stays the default 50/s.
    fx = await startGatewayFixture({ abuse: { perSourceBurst: 1000 } });
  });
  after(async () => {
    await fx?.close();
  });

  const sipp = (options: Omit<SippOptions, 'target'>): Promise<SippResult> => runSipp({ target: fx.target, ...options });
  const ok = (r: SippResult): void => expectSippSuccess(r);

  it('answers a trunk call to a DID with 200 and SDP, receives the caller audio, and ends on the caller BYE', async () => {
    const before = fx.handler.calls.length;
    ok(await sipp({ scenario: 'uac-invite-expect-200-caller-bye.xml', service: numbers.trunkDid }));
    const seen = fx.handler.calls[before];
    assert.ok(seen, 'the CallHandler got the call');
    assert.equal(seen.call.info.tenantId, fx.ids.tenantId);
    assert.equal(seen.call.info.dialled, numbers.trunkDid);
    assert.equal(seen.call.info.matchedBy, 'request-uri');
    await waitFor(() => seen.endReason !== undefined);
    assert.equal(seen.endReason, 'remote-bye');
    // 2.5 s of PCMU at 20 ms per packet, sent for about 2.5 s before the BYE.
    assert.ok(seen.framesIn >= 80, `caller audio frames received: ${seen.framesIn}`);
    assert.equal(fx.gateway.registry.size, 0);
  });

  it('takes the same call over TCP (one connection, framed by Content-Length)', async () => {
    const before = fx.handler.calls.length;
    ok(await runSipp({ target: `127.0.0.1:${fx.gateway.ports.TCP}`, transport: 'tcp', scenario: 'uac-invite-expect-200-caller-bye.xml', service: numbers.trunkDid }));
    assert.equal(fx.handler.calls[before]?.call.info.transport, 'TCP');
  });

  it('sends BYE itself when the call handler hangs up, and the caller answers it', async () => {
    const before = fx.handler.calls.length;
    ok(await sipp({ scenario: 'uac-invite-expect-200-gateway-bye.xml', service: numbers.trunkDid, keys: { caller: 'gw-hangup' } }));
    const seen = fx.handler.calls[before];
    assert.ok(seen);
    await waitFor(() => seen.endReason !== undefined);
    assert.equal(seen.endReason, 'test-hangup');
    assert.ok(seen.framesIn > 0);
  });

  it('answers a CANCEL while ringing with 200 and the INVITE with 487; no call reaches the handler', async () => {
    const before = fx.handler.calls.length;
    ok(await sipp({ scenario: 'uac-invite-cancel-expect-487.xml', service: numbers.trunkDid }));
    assert.equal(fx.handler.calls.length, before);
    await waitFor(() => fx.media.openSessions === 0);
    assert.equal(fx.gateway.registry.inProgress, 0);
  });

  it('refuses a source that is no trunk termination address with 403', async () => {
    ok(await sipp({ scenario: 'uac-invite-expect-403.xml', service: numbers.trunkDid, localIp: '127.0.0.3' }));
  });

  it('answers 404 for a number nobody provisioned, and for another tenant\'s number', async () => {
    ok(await sipp({ scenario: 'uac-invite-expect-404.xml', service: '+919999999999' }));
    ok(await sipp({ scenario: 'uac-invite-expect-404.xml', service: numbers.otherTenant }));
  });

  it('answers 480 for a disabled number', async () => {
    ok(await sipp({ scenario: 'uac-invite-expect-480.xml', service: numbers.disabled }));
  });

  it('answers 488 when the offer has no codec in common (G.729 only)', async () => {
    ok(await sipp({ scenario: 'uac-invite-no-common-codec-expect-488.xml', service: numbers.trunkDid }));
    assert.equal(fx.media.openSessions, 0);
  });

  it('identifies the number by the To user when the Request-URI user is no number', async () => {
    const before = fx.handler.calls.length;
    ok(await sipp({ scenario: 'uac-invite-expect-200-caller-bye.xml', service: 'inbound', keys: { to_user: numbers.trunkDid } }));
    assert.equal(fx.handler.calls[before]?.call.info.matchedBy, 'to');
  });

  it('falls back to the trunk Extension Number when neither user is a DID', async () => {
    const before = fx.handler.calls.length;
    ok(await sipp({ scenario: 'uac-invite-expect-200-caller-bye.xml', service: numbers.extension }));
    const info = fx.handler.calls[before]?.call.info;
    assert.equal(info?.matchedBy, 'extension');
    assert.equal(info?.dialled, numbers.trunkDid);
    assert.equal(info?.tenantId, fx.ids.tenantId);
  });

  it('answers a re-INVITE (hold) with 200 and a recvonly answer, and keeps the call up', async () => {
    const before = fx.handler.calls.length;
    ok(await sipp({ scenario: 'uac-reinvite-expect-200.xml', service: numbers.trunkDid }));
    const seen = fx.handler.calls[before];
    assert.ok(seen);
    await waitFor(() => seen.endReason !== undefined);
    assert.equal(seen.endReason, 'remote-bye');
  });

  it('answers an offerless INVITE with its own offer and takes the answer from the ACK (late offer)', async () => {
    const before = fx.handler.calls.length;
    ok(await sipp({ scenario: 'uac-invite-late-offer-expect-200.xml', service: numbers.trunkDid }));
    const seen = fx.handler.calls[before];
    assert.ok(seen);
    await waitFor(() => seen.endReason !== undefined);
    assert.equal(seen.endReason, 'remote-bye');
    assert.ok(seen.framesIn >= 80, `caller audio frames received: ${seen.framesIn}`);
  });

  it('reports an RFC 4733 key press sent by the caller', async () => {
    const before = fx.handler.calls.length;
    ok(await sipp({ scenario: 'uac-invite-dtmf-rfc4733-expect-200.xml', service: numbers.trunkDid }));
    const seen = fx.handler.calls[before];
    assert.ok(seen);
    assert.deepEqual(seen.dtmf.map((d) => [d.digit, d.via]), [['1', 'rtp']]);
  });

  it('takes 150 calls at 40/s (under the per-source limit) without a failure and leaves no call, dialog or media session behind', async () => {
    const r = await sipp({ scenario: 'uac-invite-expect-200-immediate-bye.xml', service: numbers.trunkDid, calls: 150, rate: 40, timeoutMs: 30_000 });
    assert.equal(r.exitCode, 0, r.errors);
    assert.equal(r.successful, 150);
    await waitFor(() => fx.gateway.registry.inProgress === 0 && fx.media.openSessions === 0 && fx.gateway.stack.dialogs.size === 0);
  });
});
