import assert from 'node:assert/strict';
import { pino } from 'pino';
import { CallRecorder } from '../../control-api/features/calls/call-recorder.js';
import { RecipeCallHandler } from '../../control-api/features/gateway-adapters/recipe-call-handler.js';
import { QuickJsCodeRunner } from '../../control-api/features/recipes/code-sandbox/quickjs-code-runner.js';
import { platformServices } from '../../control-api/features/recipes/platform-services.js';
import { StoreCallDirectory } from '../../control-api/features/gateway-adapters/store-call-directory.js';
import { createResourceDefinitions } from '../../control-api/model/resources/registry.js';
import { numberDoc, recipeDoc, testBox, trunkDoc } from '../helpers/resource-documents.js';
import { runSipp } from '../helpers/sipp.js';
import { startGatewayFixture, type GatewayFixture } from './gateway-harness.js';
import { queueCallAnalysis } from '../../control-api/features/insights/queue-call-analysis.js';

/**
 * The composition the gateway role uses: the store-backed directory (with a trunk given by FQDN)
 * and the RecipeCallHandler that runs the number's recipe and records the call. The recipe here
 * speaks for longer than the caller stays, so the caller's BYE ends the call mid-recipe.
 */
describe('gateway with the control-plane adapters', function () {
  this.timeout(60_000);
  let fx: GatewayFixture;
  const resolved: string[] = [];
  const code = new QuickJsCodeRunner({ workers: 1 });
  const longNumber = '+914440000008';

  before(async () => {
    const logger = pino({ level: 'silent' });
    fx = await startGatewayFixture({}, (store) => ({
      directory: new StoreCallDirectory({
        db: store.db,
        resolve: async (host) => {
          resolved.push(host);
          return host === 'carrier.example.net' ? ['127.0.0.4'] : [];
        },
      }),
      callHandler: new RecipeCallHandler({
        db: store.db,
        recorder: new CallRecorder({ db: store.db, onConversationEnded: queueCallAnalysis() }),
        services: platformServices({ db: store.db, box: testBox(), code, logger }),
        logger,
      }),
    }));
    const defs = createResourceDefinitions({ secretBox: testBox() });
    const long = 'Thank you for calling the plant store. Our opening hours are nine to six, Monday to Saturday. Please stay on the line while we find your order.';
    await defs.recipe.repository.create(fx.store.db, fx.ids.tenantId, recipeDoc('Hold', {
      blocks: [
        { id: 'greet', type: 'message', settings: { text: long } },
        { id: 'bye', type: 'close', settings: { closingScript: 'Goodbye', disposition: 'done' } },
      ],
    }) as never);
    await defs.sipTrunk.repository.create(fx.store.db, fx.ids.tenantId, trunkDoc('local-carrier', {
      inbound: { terminationAddresses: ['127.0.0.6'], dids: [longNumber] },
    }) as never);
    await defs.phoneNumber.repository.create(fx.store.db, fx.ids.tenantId, numberDoc(longNumber, 'Hold', { provider: { type: 'customSipTrunk', trunk: 'local-carrier' } }) as never);
    await defs.sipTrunk.repository.create(fx.store.db, fx.ids.tenantId, trunkDoc('fqdn-carrier', {
      inbound: { terminationAddresses: ['carrier.example.net'], dids: ['+914440000009'] },
    }) as never);
    await defs.phoneNumber.repository.create(fx.store.db, fx.ids.tenantId, numberDoc('+914440000009', 'Hold', { provider: { type: 'customSipTrunk', trunk: 'fqdn-carrier' } }) as never);
  });
  after(async () => {
    await fx?.close();
    await code.close();
  });

  it('records an answered call from answer to the caller BYE in the calls table', async () => {
    const r = await runSipp({ target: fx.target, scenario: 'uac-invite-expect-200-caller-bye.xml', service: longNumber, localIp: '127.0.0.6' });
    assert.equal(r.exitCode, 0, r.errors);
    let row;
    const end = Date.now() + 20_000;
    do {
      row = await fx.store.db.selectFrom('calls').selectAll().where('tenant_id', '=', fx.ids.tenantId).executeTakeFirst();
      if (row?.status === 'ended') break;
      await new Promise((res) => setTimeout(res, 50));
    } while (Date.now() < end);
    assert.ok(row);
    assert.equal(row.status, 'ended');
    assert.equal(row.direction, 'inbound');
    assert.equal(row.phone_number, longNumber);
    assert.equal(row.remote_number, '+919800000001');
    assert.equal(row.end_reason, 'callerHangup');
    assert.equal(row.analysis_status, 'analyzing');
  });

  it('accepts a source whose address a trunk names by FQDN', async () => {
    const r = await runSipp({ target: fx.target, scenario: 'uac-invite-expect-200-caller-bye.xml', service: '+914440000009', localIp: '127.0.0.4' });
    assert.equal(r.exitCode, 0, r.errors);
    assert.ok(resolved.includes('carrier.example.net'));
  });
});
