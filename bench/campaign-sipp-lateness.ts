/**
 * Lateness of N campaign calls due at the same instant, dialled through the gateway's real SIP
 * Originator to a SIPp UAS answering 486 (issue 5). Lateness = from the due moment to
 * `originate()` (the INVITE follows after the trunk lookup) and to the outcome being recorded.
 * Uses the test harness: PostgreSQL private cluster (fsync off), gateway and media on loopback.
 *
 *   node --import tsx bench/campaign-sipp-lateness.ts [--calls 10000]
 */
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { systemClock } from '../core/clock.js';
import { createLogger } from '../core/logger.js';
import type { OriginateRequest, OriginateResult, Originator } from '../core/ports/originator.js';
import { acceptMessage } from '../control-api/campaigns/accept-message.js';
import { startCampaignWorker } from '../control-api/campaigns/campaign-worker.js';
import type { CampaignSpec } from '../control-api/domain/campaign.js';
import { StoreCallDirectory } from '../control-api/gateway-adapters/store-call-directory.js';
import { StoreTrunkRoutes } from '../control-api/gateway-adapters/store-trunk-routes.js';
import { campaignDoc, numberDoc, testBox, trunkDoc } from '../control-api/resources/definitions/test-fixtures.js';
import { createResourceDefinitions } from '../control-api/resources/registry.js';
import { SipOriginator } from '../gateway/outbound/sip-originator.js';
import { startGatewayFixture } from '../test/gateway/gateway-harness.js';
import { startSippUas } from '../test/gateway/outbound-sipp-uas.js';
import { stopTestPostgres } from '../test/helpers/postgres-cluster.js';

const { values: args } = parseArgs({ options: { calls: { type: 'string', default: '10000' } } });
const calls = Number(args.calls);
const pct = (sorted: readonly number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;

async function main(): Promise<void> {
  const fx = await startGatewayFixture();
  const box = testBox();
  const uas = await startSippUas('uas-486.xml', { calls, timeoutMs: 240_000 });
  const defs = createResourceDefinitions({ secretBox: box });
  const db = fx.store.db;
  await defs.sipTrunk.repository.create(db, fx.ids.tenantId, trunkDoc('sipp-bench', {
    inbound: { terminationAddresses: ['127.0.0.99'], dids: [] },
    outbound: { address: '127.0.0.1', port: uas.port, transport: 'udp', username: 'acme-out', password: 'trunk-secret-1' },
  }) as never);
  await defs.phoneNumber.repository.create(db, fx.ids.tenantId, numberDoc('+914455599999', 'Flow', { provider: { type: 'customSipTrunk', trunk: 'sipp-bench' } }) as never);
  const campaign = await defs.campaign.repository.create(db, fx.ids.tenantId, campaignDoc('Bench SIPp', '+914455599999', 'Flow', { published: true }) as CampaignSpec);

  const far = Date.now() + 3_600_000;
  const ids: string[] = [];
  for (let i = 0; i < calls; i += 200) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(200, calls - i) }, () =>
        acceptMessage(db, fx.ids.tenantId, { campaignId: campaign.id, to: '+919812345678', variables: {}, scheduledAt: far, bypassCallingWindow: true }, { now: Date.now() }),
      ),
    );
    ids.push(...batch.map((b) => b.messageId));
  }
  const due = Date.now() + 5_000;
  await db.updateTable('campaign_messages').set({ next_attempt_at: new Date(due), requested_at: new Date(due) }).where('id', 'in', ids).execute();

  const sip = new SipOriginator({
    stack: fx.gateway.stack,
    media: fx.media,
    trunks: new StoreTrunkRoutes({ db, secretBox: box }),
    directory: new StoreCallDirectory({ db }),
    registry: fx.gateway.registry,
    clock: systemClock,
    logger: pino({ level: 'silent' }),
  });
  const toOriginate: number[] = [];
  const toOutcome: number[] = [];
  const outcomes = new Map<string, number>();
  const measured: Originator = {
    async originate(request: OriginateRequest): Promise<OriginateResult> {
      toOriginate.push(Date.now() - due);
      const result = await sip.originate(request);
      toOutcome.push(Date.now() - due);
      const key = `${result.outcome}/${result.sipStatus ?? '-'}`;
      outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
      return result;
    },
  };
  const worker = await startCampaignWorker({ store: fx.store, logger: createLogger({ level: 'warn' }), originator: measured, secretBox: box, trigger: 'poll', workerId: 'bench-sipp' });
  while (toOutcome.length < calls && Date.now() < due + 240_000) await new Promise((r) => setTimeout(r, 200));
  await worker.stop(2_000);
  uas.stop();
  const a = [...toOriginate].sort((x, y) => x - y);
  const b = [...toOutcome].sort((x, y) => x - y);
  console.log(`${calls} calls due at once -> SIPp UAS (486), store poller, real SIP Originator over UDP loopback`);
  console.log(`  due -> originate():      p50 ${pct(a, 0.5)} ms  p99 ${pct(a, 0.99)} ms  max ${a.at(-1) ?? 0} ms  (${a.length} calls)`);
  console.log(`  due -> outcome (486 in): p50 ${pct(b, 0.5)} ms  p99 ${pct(b, 0.99)} ms  max ${b.at(-1) ?? 0} ms  (${b.length} calls)`);
  console.log(`  outcomes: ${JSON.stringify(Object.fromEntries(outcomes))}`);
  await fx.close();
  await stopTestPostgres();
}

main().catch(async (error: unknown) => {
  console.error(error);
  await stopTestPostgres();
  process.exit(1);
});
