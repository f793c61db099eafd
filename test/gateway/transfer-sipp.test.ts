import assert from 'node:assert/strict';
import { pino } from 'pino';
import { systemClock } from '../../core/clock.js';
import { StoreTrunkRoutes } from '../../control-api/gateway-adapters/store-trunk-routes.js';
import { testBox } from '../../control-api/resources/definitions/test-fixtures.js';
import { SipOriginator } from '../../gateway/outbound/sip-originator.js';
import { GatewayCallTransfer } from '../../gateway/transfer/gateway-call-transfer.js';
import { runSipp, type SippResult } from '../helpers/sipp.js';
import { numbers, startGatewayFixture, type GatewayFixture, type SeenCall } from './gateway-harness.js';
import { startSippUas } from './outbound-sipp-uas.js';

/**
 * The Transfer block's action on a live inbound call from SIPp: blind REFER when the caller's
 * Allow lists REFER (RFC 3515 NOTIFY progress), else a B2BUA bridge to a second SIPp as target.
 */
describe('gateway: call transfer (REFER and B2BUA) with SIPp', function () {
  this.timeout(60_000);
  let fx: GatewayFixture;
  let transfers: GatewayCallTransfer;

  before(async () => {
    fx = await startGatewayFixture({ ringMs: 0 });
    const logger = pino({ level: process.env.GATEWAY_TEST_LOG ?? 'silent' });
    const originator = new SipOriginator({
      stack: fx.gateway.stack,
      media: fx.media,
      trunks: new StoreTrunkRoutes({ db: fx.store.db, secretBox: testBox() }),
      clock: systemClock,
      logger,
    });
    transfers = new GatewayCallTransfer({ stack: fx.gateway.stack, registry: fx.gateway.registry, media: fx.media, originator, clock: systemClock, logger, ringTimeoutMs: 5000, referTimeoutMs: 5000 });
  });
  after(async () => {
    await fx?.close();
  });

  /** Starts a SIPp caller and resolves with the call it made once the gateway answered. */
  async function callIn(scenario: string): Promise<{ seen: SeenCall; sipp: Promise<SippResult> }> {
    const before = fx.handler.calls.length;
    const sipp = runSipp({ target: fx.target, scenario, service: numbers.trunkDid });
    const end = Date.now() + 5000;
    while (fx.handler.calls.length === before) {
      if (Date.now() > end) throw new Error(`no call from ${scenario}: ${JSON.stringify(await sipp)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return { seen: fx.handler.calls[before] as SeenCall, sipp };
  }
  const sippOk = (r: SippResult): void => assert.equal(r.exitCode, 0, `SIPp failed (exit ${r.exitCode}):\n${r.errors}\n${r.stdout.slice(-1500)}`);

  it('REFERs a caller that allows REFER, follows the sipfrag NOTIFYs to 200, then hangs up', async () => {
    const { seen, sipp } = await callIn('uac-refer-accept.xml');
    const outcome = await transfers.transfer(seen.call.info.id, 'sip:agent@127.0.0.1:5099', new AbortController().signal);
    assert.deepEqual(outcome, { ok: true, method: 'refer' });
    assert.equal((await seen.call.ended).reason, 'transferred');
    sippOk(await sipp);
  });

  it('a REFER whose target is busy (sipfrag 486) fails with the status and keeps the caller on the line', async () => {
    const { seen, sipp } = await callIn('uac-refer-target-busy.xml');
    const outcome = await transfers.transfer(seen.call.info.id, 'sip:agent@127.0.0.1:5099', new AbortController().signal);
    assert.deepEqual(outcome, { ok: false, reason: 'Busy Here', sipStatus: 486 });
    assert.equal(seen.call.signal.aborted, false, 'the caller is still connected');
    assert.equal((await seen.call.ended).reason, 'remote-bye');
    sippOk(await sipp);
  });

  it('bridges a caller without REFER support to the target as a B2BUA, relaying audio, and ends both legs together', async () => {
    const target = await startSippUas('uas-answer-expect-bye.xml');
    const { seen, sipp } = await callIn('uac-invite-expect-200-caller-bye.xml');
    const outcome = await transfers.transfer(seen.call.info.id, `sip:agent@127.0.0.1:${target.port}`, new AbortController().signal);
    assert.deepEqual(outcome, { ok: true, method: 'bridge' });
    await new Promise((r) => setTimeout(r, 800));
    const stats = transfers.bridges.get(seen.call.info.id);
    assert.ok(stats && stats.callerToTarget > 10, `caller audio relayed to the target: ${JSON.stringify(stats)}`);
    sippOk(await sipp);
    const t = await target.done;
    assert.equal(t.exitCode, 0, `target SIPp got the BYE after the caller hung up:\n${t.errors}\n${t.messages.slice(-2000)}`);
    assert.match(t.messages, /Referred-By: <sip:/);
  });

  it('a busy bridge target fails the transfer with 486 and the caller stays', async () => {
    const target = await startSippUas('uas-486.xml');
    const { seen, sipp } = await callIn('uac-invite-expect-200-caller-bye.xml');
    const outcome = await transfers.transfer(seen.call.info.id, `sip:agent@127.0.0.1:${target.port}`, new AbortController().signal);
    assert.deepEqual(outcome, { ok: false, reason: 'transfer target busy: Busy Here', sipStatus: 486 });
    assert.equal(seen.call.signal.aborted, false);
    sippOk(await sipp);
    assert.equal((await target.done).exitCode, 0);
  });

  it('rejects targets that are neither a SIP URI nor E.164', async () => {
    const { seen, sipp } = await callIn('uac-invite-expect-200-caller-bye.xml');
    const outcome = await transfers.transfer(seen.call.info.id, 'mailto:agent@example.com', new AbortController().signal);
    assert.equal(outcome.ok, false);
    sippOk(await sipp);
  });
});
