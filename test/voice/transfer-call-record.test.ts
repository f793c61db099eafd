import assert from 'node:assert/strict';
import { pino } from 'pino';
import { systemClock } from '../../core/clock.js';
import type { CallTransfer } from '../../core/ports/call-transfer.js';
import { CallRecorder } from '../../control-api/features/calls/call-recorder.js';
import { RecipeCallHandler } from '../../control-api/features/gateway-adapters/recipe-call-handler.js';
import { StoreTrunkRoutes } from '../../control-api/features/gateway-adapters/store-trunk-routes.js';
import { QuickJsCodeRunner } from '../../control-api/features/recipes/code-sandbox/quickjs-code-runner.js';
import { platformServices } from '../../control-api/features/recipes/platform-services.js';
import { numberDoc, testBox, trunkDoc } from '../helpers/resource-documents.js';
import { createResourceDefinitions } from '../../control-api/model/resources/registry.js';
import { SipOriginator } from '../../gateway/outbound/sip-originator.js';
import { GatewayCallTransfer } from '../../gateway/transfer/gateway-call-transfer.js';
import { startSippUas } from '../gateway/outbound-sipp-uas.js';
import { startGatewayFixture, type GatewayFixture } from '../gateway/gateway-harness.js';
import { runSipp } from '../helpers/sipp.js';
import { queueCallAnalysis } from '../../control-api/features/insights/queue-call-analysis.js';

const box = testBox();
const defs = () => createResourceDefinitions({ secretBox: box });
const unackedNumber = '+914440000091';
const referNumber = '+914440000092';
/** RFC 3261 T1 of this gateway: 64*T1 (the wait for an ACK) is 6.4 s instead of 32 s. */
const T1 = 100;

/**
 * How transfers that were never confirmed end up in the call record: SIPp callers into the
 * gateway, RecipeCallHandler running a Transfer block, the record read back from PostgreSQL.
 */
describe('call records of transfers that were never confirmed', function () {
  this.timeout(120_000);
  let fx: GatewayFixture;
  let code: QuickJsCodeRunner;

  before(async () => {
    code = new QuickJsCodeRunner({ workers: 1 });
    const logger = pino({ level: process.env.GATEWAY_TEST_LOG ?? 'silent' });
    const slot: { impl?: CallTransfer } = {};
    fx = await startGatewayFixture({ timers: { T1 } }, (store) => ({
      callHandler: new RecipeCallHandler({
        db: store.db,
        recorder: new CallRecorder({ db: store.db, onConversationEnded: queueCallAnalysis() }),
        services: platformServices({ db: store.db, box, code, logger }),
        logger,
        transfer: { transfer: (id, target, signal) => (slot.impl as CallTransfer).transfer(id, target, signal) },
      }),
    }));
    const originator = new SipOriginator({ stack: fx.gateway.stack, media: fx.media, trunks: new StoreTrunkRoutes({ db: fx.store.db, secretBox: box }), clock: systemClock, logger });
    slot.impl = new GatewayCallTransfer({ stack: fx.gateway.stack, registry: fx.gateway.registry, media: fx.media, originator, clock: systemClock, logger, ringTimeoutMs: 10_000 });
    await defs().sipTrunk.repository.create(fx.store.db, fx.ids.tenantId, trunkDoc('desk-carrier', {
      inbound: { terminationAddresses: ['127.0.0.6'], dids: [unackedNumber, referNumber] },
    }) as never);
  });
  after(async () => {
    await fx?.close();
    await code?.close();
  });

  /** A recipe that transfers at once; when the transfer fails it apologises and hangs up. */
  async function transferRecipe(name: string, target: string): Promise<void> {
    await defs().recipe.repository.create(fx.store.db, fx.ids.tenantId, {
      name,
      startBlockId: 'handoff',
      blocks: [
        { id: 'handoff', type: 'transfer', settings: { target } },
        { id: 'sorry', type: 'close', settings: { closingScript: 'Sorry.', disposition: 'missed' } },
      ],
      connections: [{ from: 'handoff', exit: 'failed', to: 'sorry' }],
    } as never);
  }

  async function ended(number: string): Promise<{ outcome: string | null; end_reason: string | null; disposition: string | null }> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const row = await fx.store.db.selectFrom('calls').select(['status', 'outcome', 'end_reason', 'disposition']).where('tenant_id', '=', fx.ids.tenantId).where('phone_number', '=', number).executeTakeFirst();
      if (row?.status === 'ended') return row;
      if (Date.now() > deadline) throw new Error(`no ended call record for ${number}: ${JSON.stringify(row)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it('a call bridged (B2BUA) while the caller never ACKed our 200 is recorded failed / transferNotAcked, not completed', async () => {
    const target = await startSippUas('uas-answer-expect-bye.xml', { timeoutMs: 60_000 });
    await transferRecipe('Unacked desk', `sip:desk@127.0.0.1:${target.port}`);
    await defs().phoneNumber.repository.create(fx.store.db, fx.ids.tenantId, numberDoc(unackedNumber, 'Unacked desk', { provider: { type: 'customSipTrunk', trunk: 'desk-carrier' } }) as never);
    const sipp = await runSipp({ scenario: 'uac-invite-expect-200-no-ack.xml', target: fx.target, service: unackedNumber, localIp: '127.0.0.6', timeoutMs: 60_000 });
    assert.equal(sipp.successful, 1, `SIPp: ${sipp.errors || sipp.stdout.slice(-2000)}`);
    const t = await target.done;
    assert.equal(t.exitCode, 0, `the bridged target got its BYE when the unconfirmed call ended:\n${t.errors}\n${t.messages.slice(-1500)}`);
    const row = await ended(unackedNumber);
    assert.deepEqual({ outcome: row.outcome, endReason: row.end_reason }, { outcome: 'failed', endReason: 'transferNotAcked' });
  });

  it('a REFER whose subscription ends without a final NOTIFY is recorded failed / transferUnconfirmed, not completed', async () => {
    await transferRecipe('Refer desk', 'sip:agent@127.0.0.1:5099');
    await defs().phoneNumber.repository.create(fx.store.db, fx.ids.tenantId, numberDoc(referNumber, 'Refer desk', { provider: { type: 'customSipTrunk', trunk: 'desk-carrier' } }) as never);
    const sipp = await runSipp({ scenario: 'uac-refer-no-final-expect-bye.xml', target: fx.target, service: referNumber, localIp: '127.0.0.6', timeoutMs: 60_000 });
    assert.equal(sipp.successful, 1, `SIPp: ${sipp.errors || sipp.stdout.slice(-2000)}`);
    const row = await ended(referNumber);
    // The recipe took its failed exit and closed (disposition kept); the transfer's fate is unknown.
    assert.deepEqual({ outcome: row.outcome, endReason: row.end_reason, disposition: row.disposition }, { outcome: 'failed', endReason: 'transferUnconfirmed', disposition: 'missed' });
  });
});
