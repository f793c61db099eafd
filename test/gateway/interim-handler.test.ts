import assert from 'node:assert/strict';
import { pino } from 'pino';
import { CallRecorder } from '../../control-api/calls/call-recorder.js';
import { InterimCallHandler } from '../../control-api/gateway-adapters/interim-call-handler.js';
import { StoreCallDirectory } from '../../control-api/gateway-adapters/store-call-directory.js';
import { createResourceDefinitions } from '../../control-api/resources/registry.js';
import { numberDoc, testBox, trunkDoc } from '../../control-api/resources/definitions/test-fixtures.js';
import { runSipp } from '../helpers/sipp.js';
import { numbers, startGatewayFixture, type GatewayFixture } from './gateway-harness.js';

/**
 * The composition the gateway role uses: the store-backed directory (with a trunk given by FQDN)
 * and the interim handler that echoes audio and records the call.
 */
describe('gateway with the control-plane adapters', function () {
  this.timeout(60_000);
  let fx: GatewayFixture;
  const resolved: string[] = [];

  before(async () => {
    fx = await startGatewayFixture({}, (store) => ({
      directory: new StoreCallDirectory({
        db: store.db,
        resolve: async (host) => {
          resolved.push(host);
          return host === 'carrier.example.net' ? ['127.0.0.4'] : [];
        },
      }),
      callHandler: new InterimCallHandler(new CallRecorder({ db: store.db }), pino({ level: 'silent' })),
    }));
    const defs = createResourceDefinitions({ secretBox: testBox() });
    await defs.sipTrunk.repository.create(fx.store.db, fx.ids.tenantId, trunkDoc('fqdn-carrier', {
      inbound: { terminationAddresses: ['carrier.example.net'], dids: ['+914440000009'] },
    }) as never);
    await defs.phoneNumber.repository.create(fx.store.db, fx.ids.tenantId, numberDoc('+914440000009', 'Flow', { provider: { type: 'customSipTrunk', trunk: 'fqdn-carrier' } }) as never);
  });
  after(async () => {
    await fx?.close();
  });

  it('records an answered call from answer to the caller BYE in the calls table', async () => {
    const r = await runSipp({ target: fx.target, scenario: 'uac-invite-expect-200-caller-bye.xml', service: numbers.trunkDid });
    assert.equal(r.exitCode, 0, r.errors);
    let row;
    const end = Date.now() + 5000;
    do {
      row = await fx.store.db.selectFrom('calls').selectAll().where('tenant_id', '=', fx.ids.tenantId).executeTakeFirst();
      if (row?.status === 'ended') break;
      await new Promise((res) => setTimeout(res, 50));
    } while (Date.now() < end);
    assert.ok(row);
    assert.equal(row.status, 'ended');
    assert.equal(row.direction, 'inbound');
    assert.equal(row.phone_number, numbers.trunkDid);
    assert.equal(row.remote_number, '+919800000001');
    assert.equal(row.end_reason, 'remote-bye');
  });

  it('accepts a source whose address a trunk names by FQDN', async () => {
    const r = await runSipp({ target: fx.target, scenario: 'uac-invite-expect-200-caller-bye.xml', service: '+914440000009', localIp: '127.0.0.4' });
    assert.equal(r.exitCode, 0, r.errors);
    assert.ok(resolved.includes('carrier.example.net'));
  });
});
