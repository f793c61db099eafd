import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { pino } from 'pino';
import { systemClock } from '../../core/clock.js';
import type { OriginateRequest, OriginateResult } from '../../core/ports/originator.js';
import { StoreCallDirectory } from '../../control-api/features/gateway-adapters/store-call-directory.js';
import { StoreTrunkRoutes } from '../../control-api/features/gateway-adapters/store-trunk-routes.js';
import { createResourceDefinitions } from '../../control-api/model/resources/registry.js';
import { testBox, trunkDoc } from '../helpers/resource-documents.js';
import { SipOriginator } from '../../gateway/outbound/sip-originator.js';
import { captureLogs } from '../helpers/log-capture.js';
import { freshStore } from '../helpers/stores.js';
import { fixtureOriginator, startGatewayFixture, type GatewayFixture } from './gateway-harness.js';
import { expectSippUasSuccess, outboundRequest, startSippUas } from './outbound-sipp-uas.js';

/**
 * Outbound calls through a custom trunk whose far end is SIPp (Debian sip-tester) as UAS: the
 * trunk's outbound address, port and sealed credentials come from PostgreSQL through the
 * TrunkRoutes port; the Originator runs on the gateway's own stack and media service.
 */
describe('gateway: outbound calls to SIPp (Originator)', function () {
  this.timeout(60_000);
  let fx: GatewayFixture;
  let originator: SipOriginator;
  const box = testBox();
  let trunkCount = 0;

  before(async () => {
    fx = await startGatewayFixture();
    originator = fixtureOriginator(fx, box, {
      logger: pino({ level: process.env.GATEWAY_TEST_LOG ?? 'silent' }),
    });
  });
  after(async () => {
    await fx?.close();
  });

  /** A trunk of tenant acme whose outbound address is SIPp's port. */
  async function trunkTo(port: number, password = 'trunk-secret-1'): Promise<string> {
    const defs = createResourceDefinitions({ secretBox: box });
    trunkCount += 1;
    const stored = await defs.sipTrunk.repository.create(fx.store.db, fx.ids.tenantId, trunkDoc(`out-${trunkCount}`, {
      inbound: { terminationAddresses: [`127.0.0.${20 + trunkCount}`], dids: [] },
      outbound: { address: '127.0.0.1', port, transport: 'udp', username: 'acme-out', password },
    }) as never);
    return stored.id;
  }

  const request = (trunkId: string, extra: Partial<OriginateRequest> = {}): OriginateRequest => outboundRequest(fx.ids.tenantId, trunkId, extra);

  const sippOk = expectSippUasSuccess;

  it('INVITEs the trunk, reports ringing, ACKs the 200, and completes on the callee BYE', async () => {
    const uas = await startSippUas('uas-answer.xml');
    let rang = 0;
    const result = await originator.originate(request(await trunkTo(uas.port), { onRinging: () => rang++ }));
    assert.equal(result.outcome, 'answered', JSON.stringify(result));
    const answered = result as Extract<OriginateResult, { outcome: 'answered' }>;
    assert.equal(answered.sipStatus, 200);
    assert.equal(rang, 1);
    const call = fx.gateway.registry.get(answered.callId);
    assert.ok(call, 'the answered call is in the gateway registry');
    assert.equal(call.media.codec, 'PCMU');
    const completion = await answered.completion;
    assert.equal(completion.reason, 'remote-bye');
    assert.ok(completion.durationMs >= 500, `duration ${completion.durationMs}`);
    const sipp = await uas.done;
    sippOk(sipp);
    assert.match(sipp.messages, /INVITE sip:\+919812345678@127\.0\.0\.1:\d+;user=phone SIP\/2\.0/);
  });

  it('answers a 407 with Proxy-Authorization on the next CSeq and the call goes through', async () => {
    const uas = await startSippUas('uas-407-then-200.xml');
    const result = await originator.originate(request(await trunkTo(uas.port)));
    if (result.outcome !== 'answered') uas.stop();
    assert.equal(result.outcome, 'answered', JSON.stringify(result));
    await (result as Extract<OriginateResult, { outcome: 'answered' }>).completion;
    const sipp = await uas.done;
    sippOk(sipp);
    assert.match(sipp.messages, /CSeq: 2 INVITE/, 'the retried INVITE has the next CSeq (RFC 3261 sec. 8.1.3.5)');
    // SIPp's verifyauth reads only Authorization, so the proxy digest is recomputed here (RFC 2617 sec. 3.2.2.1).
    const auth = /Proxy-Authorization: Digest (.*)/.exec(sipp.messages)?.[1] ?? '';
    const p = (k: string): string => new RegExp(`${k}="?([^",]*)"?`).exec(auth)?.[1] ?? '';
    const md5 = (t: string): string => createHash('md5').update(t).digest('hex');
    assert.equal(p('algorithm'), 'MD5');
    assert.equal(p('response'), md5(`${md5(`acme-out:${p('realm')}:trunk-secret-1`)}:${p('nonce')}:${md5(`INVITE:${p('uri')}`)}`));
  });

  it('answers a 401 with Authorization that SIPp verifies (verifyauth)', async () => {
    const uas = await startSippUas('uas-401-then-200.xml', { keys: { username: 'acme-out', password: 'trunk-secret-1' } });
    const result = await originator.originate(request(await trunkTo(uas.port)));
    if (result.outcome !== 'answered') uas.stop();
    assert.equal(result.outcome, 'answered', JSON.stringify(result));
    await (result as Extract<OriginateResult, { outcome: 'answered' }>).completion;
    sippOk(await uas.done);
  });

  it('answers a challenge from each realm once: a proxy 407, then the callee 401, and the third INVITE carries both (RFC 3261 sec. 22.3)', async () => {
    const uas = await startSippUas('uas-407-then-401-then-200.xml', { keys: { username: 'acme-out', password: 'trunk-secret-1' } });
    const result = await originator.originate(request(await trunkTo(uas.port)));
    if (result.outcome !== 'answered') uas.stop();
    assert.equal(result.outcome, 'answered', JSON.stringify(result));
    await (result as Extract<OriginateResult, { outcome: 'answered' }>).completion;
    const sipp = await uas.done;
    sippOk(sipp);
    assert.equal(sipp.messages.match(/^INVITE /gm)?.length, 3);
  });

  it('a second challenge after our credentials fails the call with the status kept', async () => {
    const uas = await startSippUas('uas-401-then-200.xml', { keys: { username: 'acme-out', password: 'trunk-secret-1' } });
    const result = await originator.originate(request(await trunkTo(uas.port, 'wrong-password')));
    assert.equal(result.outcome, 'failed');
    assert.equal(result.sipStatus, 401);
    assert.match(result.outcome === 'failed' ? result.reason : '', /authentication failed/);
    const sipp = await uas.done;
    sippOk(sipp);
    assert.equal(sipp.messages.match(/^INVITE /gm)?.length, 2, 'no third INVITE');
  });

  it('CANCELs after the ring timeout (only after the 180) and reports no-answer with the 487', async () => {
    const uas = await startSippUas('uas-ring-no-answer.xml');
    const started = Date.now();
    const result = await originator.originate(request(await trunkTo(uas.port), { ringTimeoutMs: 1200 }));
    assert.deepEqual({ outcome: result.outcome, sipStatus: result.sipStatus }, { outcome: 'no-answer', sipStatus: 487 });
    assert.ok(Date.now() - started >= 1200);
    const sipp = await uas.done;
    sippOk(sipp);
    assert.match(sipp.messages, /CANCEL sip:\+919812345678@/);
  });

  it('an abort before the answer CANCELs and fails the attempt', async () => {
    const uas = await startSippUas('uas-ring-no-answer.xml');
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 600);
    const result = await originator.originate(request(await trunkTo(uas.port), { signal: abort.signal }));
    assert.equal(result.outcome, 'failed');
    assert.equal(result.sipStatus, 487);
    sippOk(await uas.done);
  });

  it('486 is busy, 503 is failed with the status kept (and the INVITE\'s Call-ID)', async () => {
    const busy = await startSippUas('uas-486.xml');
    const { sipCallId: busyCallId, ...busyResult } = (await originator.originate(request(await trunkTo(busy.port)))) as Exclude<OriginateResult, { outcome: 'answered' }>;
    assert.deepEqual(busyResult, { outcome: 'busy', sipStatus: 486, reason: 'Busy Here' });
    assert.match(String(busyCallId), /^[^\s]+$/);
    sippOk(await busy.done);
    const down = await startSippUas('uas-503.xml');
    const { sipCallId: downCallId, ...downResult } = (await originator.originate(request(await trunkTo(down.port)))) as Exclude<OriginateResult, { outcome: 'answered' }>;
    assert.deepEqual(downResult, { outcome: 'failed', sipStatus: 503, reason: 'Service Unavailable' });
    assert.notEqual(downCallId, busyCallId);
    sippOk(await down.done);
  });

  it('an abort after the answer hangs up with BYE and completes the call', async () => {
    const uas = await startSippUas('uas-answer-expect-bye.xml');
    const abort = new AbortController();
    const result = await originator.originate(request(await trunkTo(uas.port), { signal: abort.signal }));
    assert.equal(result.outcome, 'answered');
    abort.abort();
    const completion = await (result as Extract<OriginateResult, { outcome: 'answered' }>).completion;
    assert.equal(completion.reason, 'aborted');
    sippOk(await uas.done);
  });

  it('a failed number-settings lookup does not drop the answered call: it runs with the defaults and the cause is logged once as a warning', async () => {
    // A directory whose database is gone: the lookup throws a real pg error.
    const gone = await freshStore('postgres');
    await gone.close();
    const logs = captureLogs();
    const blind = new SipOriginator({
      stack: fx.gateway.stack,
      media: fx.media,
      trunks: new StoreTrunkRoutes({ db: fx.store.db, secretBox: box }),
      directory: new StoreCallDirectory({ db: gone.db }),
      registry: fx.gateway.registry,
      clock: systemClock,
      logger: logs.logger,
    });
    const uas = await startSippUas('uas-answer.xml');
    const result = await blind.originate(request(await trunkTo(uas.port)));
    assert.equal(result.outcome, 'answered', JSON.stringify(result));
    const call = fx.gateway.registry.get((result as Extract<OriginateResult, { outcome: 'answered' }>).callId);
    assert.equal(call?.info.language, 'en', 'the default language');
    await (result as Extract<OriginateResult, { outcome: 'answered' }>).completion;
    sippOk(await uas.done);
    const warned = logs.find('number settings lookup failed');
    assert.equal(warned.length, 1, JSON.stringify(logs.lines));
    assert.equal(warned[0]?.level, 'warn');
    assert.match(String((warned[0]?.err as { message?: string } | undefined)?.message), /driver has already been destroyed/);
    assert.doesNotMatch(logs.text(), /trunk-secret-1/);
  });

  it('a trunk that no longer exists fails without sending anything', async () => {
    const result = await originator.originate(request('00000000-0000-4000-8000-00000000dead'));
    assert.deepEqual(result, { outcome: 'failed', sipStatus: 503, reason: 'trunk not found' });
  });
});
