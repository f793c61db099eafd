import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { systemClock } from '../../core/clock.js';
import { StoreTrunkRegistrations } from '../../control-api/features/gateway-adapters/store-trunk-registrations.js';
import { createResourceDefinitions } from '../../control-api/model/resources/registry.js';
import { TrunkRegistrar } from '../../gateway/registration/trunk-registrar.js';
import { metricValue } from '../helpers/metric-value.js';
import { numberDoc, testBox, trunkDoc } from '../helpers/resource-documents.js';
import { expectSippSuccess, runSipp, waitFor } from '../helpers/sipp.js';
import { numbers, startGatewayFixture, type GatewayFixture } from './gateway-harness.js';
import { expectSippUasSuccess, startSippUas } from './outbound-sipp-uas.js';

/**
 * A trunk that registers (RFC 3261 sec. 10.2) with SIPp as the carrier's registrar: digest 401,
 * 423 Interval Too Brief with Min-Expires, 200, and Expires: 0 when the registrar stops. Calls
 * to the registered Contact are then taken from a source no trunk lists, and routed to the
 * trunk's numbers.
 */
describe('gateway: a trunk registers with a SIPp registrar (uas-register-expect-401-423-200.xml)', function () {
  this.timeout(90_000);
  const box = testBox();
  const registeredDid = '+914440000009';
  let fx: GatewayFixture;
  let registrar: TrunkRegistrar;
  let trunkId: string;

  before(async () => {
    fx = await startGatewayFixture({}, (store) => {
      registrar = new TrunkRegistrar({
        registrations: new StoreTrunkRegistrations({ db: store.db, secretBox: box, secretKey: randomBytes(32) }),
        clock: systemClock,
        logger: pino({ level: process.env.GATEWAY_TEST_LOG ?? 'silent' }),
        pollIntervalMs: 3_600_000,
        backoffBaseSeconds: 1,
        backoffMaxSeconds: 2,
      });
      return { registered: registrar };
    });
  });
  after(async () => {
    await registrar?.stop(0);
    await fx?.close();
  });

  /** The store's row for the trunk once it shows `state` (written after each change, so polled), or the last one seen. */
  async function storedState(state: string) {
    const deadline = Date.now() + 5_000;
    for (;;) {
      const row = await fx.store.db.selectFrom('sip_trunk_registrations').selectAll().where('trunk_id', '=', trunkId).executeTakeFirst();
      if ((row && row.state === state) || Date.now() > deadline) return row ?? { state: 'none', last_error: null, expires_at: null, contact: '' };
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it('answers the 401, takes the 423\'s Min-Expires, registers, routes calls to the Contact, and un-registers on stop', async () => {
    const uas = await startSippUas('uas-register-expect-401-423-200.xml', { keys: { username: 'acme-reg', password: 'reg-secret-1', min_expires: '120' }, timeoutMs: 40_000 });
    const defs = createResourceDefinitions({ secretBox: box });
    const trunk = await defs.sipTrunk.repository.create(fx.store.db, fx.ids.tenantId, trunkDoc('registered-carrier', {
      inbound: { terminationAddresses: [], dids: [registeredDid] },
      outbound: { username: 'acme-reg', password: 'reg-secret-1' },
      registration: { registrar: '127.0.0.1', port: uas.port, domain: 'carrier.test', expiresSeconds: 60 },
    }) as never);
    trunkId = trunk.id;
    await defs.phoneNumber.repository.create(fx.store.db, fx.ids.tenantId, numberDoc(registeredDid, 'Flow', { provider: { type: 'customSipTrunk', trunk: 'registered-carrier' } }) as never);

    registrar.start(fx.gateway.stack, fx.target);
    await waitFor(() => registrar.snapshots()[0]?.snapshot.state === 'registered', 15_000).catch(async (e: unknown) => {
      uas.stop();
      throw new Error(`${String(e)}: ${JSON.stringify(registrar.snapshots())}\n${(await uas.done).messages}`);
    });
    const row = await storedState('registered');
    assert.equal(row.state, 'registered');
    assert.equal(row.last_error, null);
    const expiresIn = (row.expires_at as Date).getTime() - Date.now();
    assert.ok(expiresIn > 100_000 && expiresIn <= 120_000, `bound for the Min-Expires (120 s), ${expiresIn} ms left`);
    assert.equal(await metricValue('vap_sip_registration_state', { trunk: trunkId, state: 'registered' }), 1);

    // The carrier delivers a DID call to the registered Contact, from an address no trunk lists.
    const contactUser = /sip:(r[0-9a-f]{24})@/.exec(row.contact)?.[1] as string;
    assert.ok(contactUser, row.contact);
    const before = fx.handler.calls.length;
    expectSippSuccess(await runSipp({ target: fx.target, localIp: '127.0.0.5', scenario: 'uac-invite-expect-200-caller-bye.xml', service: contactUser, keys: { to_user: registeredDid } }));
    const info = fx.handler.calls[before]?.call.info;
    assert.equal(info?.trunkId, trunkId);
    assert.equal(info?.dialled, registeredDid);
    assert.equal(info?.matchedBy, 'to');
    // To names another tenant's number: the registered trunk's own number takes the call.
    expectSippSuccess(await runSipp({ target: fx.target, localIp: '127.0.0.5', scenario: 'uac-invite-expect-200-caller-bye.xml', service: contactUser, keys: { to_user: numbers.otherTenant } }));
    assert.deepEqual([fx.handler.calls[before + 1]?.call.info.dialled, fx.handler.calls[before + 1]?.call.info.matchedBy], [registeredDid, 'registration']);
    // A Contact user nobody registered from that source is the phone chain's 403.
    expectSippSuccess(await runSipp({ target: fx.target, localIp: '127.0.0.5', scenario: 'uac-invite-expect-403.xml', service: 'r000000000000000000000000', keys: { to_user: registeredDid } }));

    await registrar.stop(5_000);
    const sipp = await uas.done;
    expectSippUasSuccess(sipp);
    const registers = sipp.messages.split(/\n(?=REGISTER )/).filter((m) => m.startsWith('REGISTER '));
    assert.deepEqual(registers.map((m) => /\nExpires: *(\d+)/i.exec(m)?.[1]), ['60', '60', '120', '0']);
    assert.match(registers[1] ?? '', /\nAuthorization: Digest username="acme-reg", realm="carrier.test"/);
    assert.doesNotMatch(sipp.messages, /reg-secret-1/);
    assert.equal((await storedState('stopped')).state, 'stopped');
  });
});
