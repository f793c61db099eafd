import assert from 'node:assert/strict';
import { pino } from 'pino';
import { FakeClock, systemClock } from '../../core/clock.js';
import { StoreTrunkRoutes } from '../../control-api/features/gateway-adapters/store-trunk-routes.js';
import { testBox } from '../helpers/resource-documents.js';
import { SipOriginator } from '../../gateway/outbound/sip-originator.js';
import { GatewayCallTransfer } from '../../gateway/transfer/gateway-call-transfer.js';
import { captureLogs } from '../helpers/log-capture.js';
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
  let originator: SipOriginator;
  /** The transfer's log, to check that causes reach it once. */
  const logs = captureLogs();

  before(async () => {
    fx = await startGatewayFixture({ ringMs: 0 });
    const logger = pino({ level: process.env.GATEWAY_TEST_LOG ?? 'silent' });
    originator = new SipOriginator({
      stack: fx.gateway.stack,
      media: fx.media,
      trunks: new StoreTrunkRoutes({ db: fx.store.db, secretBox: testBox() }),
      clock: systemClock,
      logger,
    });
    transfers = new GatewayCallTransfer({ stack: fx.gateway.stack, registry: fx.gateway.registry, media: fx.media, originator, clock: systemClock, logger: logs.logger, ringTimeoutMs: 5000, referTimeoutMs: 5000 });
  });
  after(async () => {
    await fx?.close();
  });

  /** Starts a SIPp caller and resolves with the call it made once the gateway answered. */
  async function callIn(scenario: string, keys?: Record<string, string>): Promise<{ seen: SeenCall; sipp: Promise<SippResult> }> {
    const before = fx.handler.calls.length;
    const sipp = runSipp({ target: fx.target, scenario, service: numbers.trunkDid, ...(keys ? { keys } : {}) });
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

  it('answers a bridge target\'s re-offer it cannot take with 488 and keeps both legs up (RFC 3261 sec. 14.2)', async () => {
    const target = await startSippUas('uas-answer-bad-reoffer-expect-488.xml');
    const { seen, sipp } = await callIn('uac-invite-expect-200-caller-bye.xml');
    const outcome = await transfers.transfer(seen.call.info.id, `sip:agent@127.0.0.1:${target.port}`, new AbortController().signal);
    assert.deepEqual(outcome, { ok: true, method: 'bridge' });
    sippOk(await sipp);
    const t = await target.done;
    assert.equal(t.exitCode, 0, `the target got 488 for its G.729 re-offer, then the BYE:\n${t.errors}\n${t.messages.slice(-2500)}`);
    assert.match(t.messages, /SIP\/2\.0 488 /);
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

  /** Resolves once `check` holds, polling; fails after `ms`. */
  async function until(check: () => boolean, ms: number, what: string): Promise<void> {
    const end = Date.now() + ms;
    while (!check()) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  /** A transfer on a fake clock, so the test can move the transferor's time past the waits at once. */
  function onFakeClock(): { clock: FakeClock; slow: GatewayCallTransfer } {
    const clock = new FakeClock(1_000_000);
    return { clock, slow: new GatewayCallTransfer({ stack: fx.gateway.stack, registry: fx.gateway.registry, media: fx.media, originator, clock, logger: logs.logger }) };
  }

  it('waits past the transferee\'s Timer B (64*T1 = 32 s) for the final NOTIFY: a 408 that comes after 33 s is the outcome (RFC 3515 sec. 2.4.5)', async () => {
    const { clock, slow } = onFakeClock();
    const { seen, sipp } = await callIn('uac-refer-late-final.xml', { progress: '100 Trying', expires: '60' });
    const pending = slow.transfer(seen.call.info.id, 'sip:agent@127.0.0.1:5099', new AbortController().signal);
    await until(() => clock.pendingCount > 0, 5000, 'the final-NOTIFY wait to start (after the 202)');
    // SIPp holds its final NOTIFY back for 2.5 s; meanwhile 33 s pass for the transferor.
    clock.advance(33_000);
    const outcome = await pending;
    assert.deepEqual(outcome, { ok: false, reason: 'Request Timeout', sipStatus: 408 });
    assert.equal(seen.call.signal.aborted, false, 'the caller is still connected');
    sippOk(await sipp);
  });

  it('once the target rings (sipfrag 180), the wait stretches to the subscription\'s expiry: an outcome after 60 s still counts (RFC 6665 sec. 4.1.3)', async () => {
    const { clock, slow } = onFakeClock();
    const { seen, sipp } = await callIn('uac-refer-late-final.xml', { progress: '180 Ringing', expires: '120' });
    // Counts NOTIFYs: the dialog emits to every listener at once, so when this one counted, the transfer has read it too.
    let notifies = 0;
    const pending = slow.transfer(seen.call.info.id, 'sip:agent@127.0.0.1:5099', new AbortController().signal);
    fx.gateway.registry.get(seen.call.info.id)?.leg.on('notify', () => void (notifies += 1));
    await until(() => notifies >= 1, 5000, 'the NOTIFY with sipfrag 180');
    // 60 s: past Timer B and the 36 s default wait, within the 120 s the subscription was given.
    clock.advance(60_000);
    const outcome = await pending;
    assert.deepEqual(outcome, { ok: false, reason: 'Request Timeout', sipStatus: 408 });
    sippOk(await sipp);
  });

  it('a REFER subscription terminated without a final status is reported unconfirmed, not as a transfer or a plain failure (RFC 6665 sec. 4.1.3)', async () => {
    const { seen, sipp } = await callIn('uac-refer-no-final-expect-bye.xml');
    const outcome = await transfers.transfer(seen.call.info.id, 'sip:agent@127.0.0.1:5099', new AbortController().signal);
    assert.equal(outcome.ok, false);
    assert.equal(!outcome.ok && outcome.unconfirmed, true, JSON.stringify(outcome));
    assert.match(!outcome.ok ? outcome.reason : '', /subscription ended \(noresource\) without a final status/);
    assert.equal(seen.call.signal.aborted, false, 'the caller is still connected');
    await seen.call.hangup('test-hangup');
    sippOk(await sipp);
  });

  it('an aborted bridge transfer whose target answers across the CANCEL ACKs and BYEs that leg, and the caller stays (RFC 3261 sec. 9.1)', async () => {
    const target = await startSippUas('uas-180-cancel-answer-anyway.xml');
    const { seen, sipp } = await callIn('uac-invite-expect-200-caller-bye.xml');
    const stop = new AbortController();
    const pending = transfers.transfer(seen.call.info.id, `sip:agent@127.0.0.1:${target.port}`, stop.signal);
    // Whether the abort comes before or after the 180, the CANCEL goes after it (sec. 9.1).
    setTimeout(() => stop.abort(), 300);
    const outcome = await pending;
    assert.equal(outcome.ok, false, JSON.stringify(outcome));
    assert.equal(transfers.bridges.has(seen.call.info.id), false, 'no bridge to a leg we cancelled');
    assert.equal(seen.call.signal.aborted, false, 'the caller is still connected');
    const t = await target.done;
    assert.equal(t.exitCode, 0, `the target got ACK then BYE at once:\n${t.errors}\n${t.messages.slice(-2000)}`);
    sippOk(await sipp);
  });

  it('a bridge target the gateway cannot reach (TLS, which this gateway does not listen on) fails 503 with the transport error as cause, logged once', async () => {
    const { seen, sipp } = await callIn('uac-invite-expect-200-caller-bye.xml');
    const outcome = await transfers.transfer(seen.call.info.id, 'sip:agent@127.0.0.1:5999;transport=tls', new AbortController().signal);
    assert.equal(outcome.ok, false);
    assert.equal(!outcome.ok && outcome.sipStatus, 503);
    const cause = !outcome.ok ? outcome.cause : undefined;
    assert.ok(cause instanceof Error, `cause: ${String(cause)}`);
    assert.match(cause.message, /transport TLS is not enabled/);
    const logged = logs.find('transfer target unreachable').filter((l) => l.callId === seen.call.info.id);
    assert.equal(logged.length, 1);
    assert.equal(logged[0]?.level, 'warn');
    assert.match(String((logged[0]?.err as { message?: string } | undefined)?.message), /transport TLS is not enabled/);
    sippOk(await sipp);
  });

  it('rejects targets that are neither a SIP URI nor E.164', async () => {
    const { seen, sipp } = await callIn('uac-invite-expect-200-caller-bye.xml');
    const outcome = await transfers.transfer(seen.call.info.id, 'mailto:agent@example.com', new AbortController().signal);
    assert.equal(outcome.ok, false);
    sippOk(await sipp);
  });
});
