import assert from 'node:assert/strict';
import { parse } from 'csv-parse/sync';
import { FakeClock } from '../../core/clock.js';
import { createLogger } from '../../core/logger.js';
import { acceptMessage } from '../../control-api/features/campaigns/accept-message.js';
import { CampaignScheduler } from '../../control-api/features/campaigns/campaign-scheduler.js';
import type { CampaignInput, CampaignSpec } from '../../control-api/model/domain/campaign.js';
import type { RunningServer } from '../../control-api/platform/http/serve.js';
import { campaignDoc, numberDoc, testBox, trunkDoc } from '../helpers/resource-documents.js';
import { createResourceDefinitions } from '../../control-api/model/resources/registry.js';
import { fixtureOriginator, startGatewayFixture, type GatewayFixture } from '../gateway/gateway-harness.js';
import { startSippUas, type SippUas } from '../gateway/outbound-sipp-uas.js';
import { operatorToken } from '../helpers/management-app.js';
import { storeKinds } from '../helpers/stores.js';
import { startControl } from './twirp-client.js';

/**
 * Issue 12: every attempt of a campaign call that never connected is a call record (calls API)
 * and a Master Report row, written with the attempt's outcome. Real SIPp callees refuse the calls
 * the ways a carrier does: busy (twice, so both attempts show), ring-out (CANCEL after the ring
 * duration), 503, 403, and a 401 challenge our trunk answers with the wrong password.
 */
interface Case {
  readonly name: string;
  readonly scenario: string;
  readonly campaign: Partial<CampaignInput>;
  readonly password?: string;
  readonly uas?: { calls?: number; timeoutMs?: number; keys?: Record<string, string> };
  /** [attempt, outcome, sipStatus] of each record, in attempt order. */
  readonly expected: ReadonlyArray<readonly [number, string, number]>;
}

const finalOnly: Partial<CampaignInput> = { retryScenarios: ['busy'] };
const cases: readonly Case[] = [
  { name: 'busy', scenario: 'uas-486.xml', campaign: { maxRetries: 1, retryIntervalMinutes: 1, retryScenarios: ['busy'] }, uas: { calls: 2 }, expected: [[1, 'busy', 486], [2, 'busy', 486]] },
  { name: 'no answer', scenario: 'uas-ring-no-answer.xml', campaign: { ringDurationSeconds: 15, ...finalOnly }, uas: { timeoutMs: 40_000 }, expected: [[1, 'no_answer', 487]] },
  { name: '503', scenario: 'uas-503.xml', campaign: finalOnly, expected: [[1, 'failed', 503]] },
  { name: '403', scenario: 'uas-403.xml', campaign: finalOnly, expected: [[1, 'failed', 403]] },
  {
    name: 'wrong trunk password',
    scenario: 'uas-401-then-200.xml',
    campaign: finalOnly,
    password: 'not-the-trunk-secret',
    uas: { keys: { username: 'acme-out', password: 'trunk-secret-1' } },
    expected: [[1, 'failed', 401]],
  },
];

for (const kind of storeKinds) {
  describe(`campaign calls that never connected are call records and report rows [${kind}]`, function () {
    this.timeout(120_000);
    const box = testBox();
    const clock = new FakeClock(Date.parse('2026-03-02T04:30:00Z'));
    let fx: GatewayFixture;
    let control: RunningServer;
    let scheduler: CampaignScheduler;
    const placed = new Map<string, { messageId: string; campaignId: string; from: string; to: string; uas: SippUas }>();

    const api = async (path: string): Promise<Response> => fetch(`http://127.0.0.1:${control.port}${path}`, { headers: { Authorization: `Bearer ${operatorToken}` } });

    before(async function () {
      this.timeout(120_000);
      fx = await startGatewayFixture({}, undefined, kind);
      control = await startControl(fx.store, { clock });
      const originator = fixtureOriginator(fx, box);
      scheduler = new CampaignScheduler({ db: fx.store.db, originator, clock, logger: createLogger({ level: 'silent' }), workerId: `unconnected-${kind}` });
      const defs = createResourceDefinitions({ secretBox: box });
      let seq = 0;
      for (const c of cases) {
        seq += 1;
        const uas = await startSippUas(c.scenario, c.uas ?? {});
        await defs.sipTrunk.repository.create(fx.store.db, fx.ids.tenantId, trunkDoc(`callee-${seq}`, {
          inbound: { terminationAddresses: [`127.0.0.${80 + seq}`], dids: [] },
          outbound: { address: '127.0.0.1', port: uas.port, transport: 'udp', username: 'acme-out', password: c.password ?? 'trunk-secret-1' },
        }) as never);
        const from = `+91445551${String(seq).padStart(4, '0')}`;
        await defs.phoneNumber.repository.create(fx.store.db, fx.ids.tenantId, numberDoc(from, 'Flow', { provider: { type: 'customSipTrunk', trunk: `callee-${seq}` }, language: 'hi-IN' }) as never);
        const campaign = await defs.campaign.repository.create(fx.store.db, fx.ids.tenantId, campaignDoc(`Never connected ${seq}`, from, 'Flow', { published: true, ...c.campaign }) as CampaignSpec);
        const to = `+91981230${String(seq).padStart(4, '0')}`;
        const { messageId } = await acceptMessage(fx.store.db, fx.ids.tenantId, { campaignId: campaign.id, to, variables: { lead: `L-${seq}` }, scheduledAt: clock.now(), bypassCallingWindow: true }, { now: clock.now() });
        placed.set(c.name, { messageId, campaignId: campaign.id, from, to, uas });
      }
      // Every first attempt at once (the ring-out takes its 15 s meanwhile), then the busy retry.
      assert.equal(await scheduler.runDueBatch(50), cases.length);
      await scheduler.settled();
      clock.advance(60_000);
      assert.equal(await scheduler.runDueBatch(50), 1);
      await scheduler.settled();
      for (const p of placed.values()) assert.notEqual((await p.uas.done).exitCode, null);
    });
    after(async () => {
      await control?.close(0);
      await fx?.close();
    });

    it('lists each attempt in the calls API with its outcome, ids, times, and analysis skipped', async () => {
      const res = await api('/v1/tenants/acme/calls?direction=outbound&limit=200');
      assert.equal(res.status, 200);
      const { items } = (await res.json()) as { items: Array<Record<string, unknown> & { analysis: Record<string, unknown> }> };
      assert.equal(items.length, cases.reduce((n, c) => n + c.expected.length, 0));
      for (const c of cases) {
        const p = placed.get(c.name)!;
        const mine = items.filter((i) => i.messageId === p.messageId).sort((a, b) => Number(a.attempt) - Number(b.attempt));
        assert.deepEqual(mine.map((i) => [i.attempt, i.outcome, i.sipStatus]), c.expected, c.name);
        for (const call of mine) {
          assert.equal(call.direction, 'outbound');
          assert.equal(call.status, 'ended');
          assert.equal(call.endReason, call.outcome, `${c.name}: the end reason is the outcome`);
          assert.equal(call.campaignId, p.campaignId);
          assert.equal(call.phoneNumber, p.from);
          assert.equal(call.contactNumber, p.to);
          assert.equal(call.language, 'hi-IN');
          assert.deepEqual(call.variables, { lead: `L-${cases.indexOf(c) + 1}` });
          assert.equal(call.answeredAt, null);
          assert.equal(call.durationSeconds, 0);
          assert.equal(call.recording, null);
          assert.equal(call.analysis.status, 'skipped');
          assert.ok(Date.parse(String(call.startedAt)) <= Date.parse(String(call.endedAt)), `${c.name}: started before it ended`);
        }
      }
      // Each attempt's INVITE has its own Call-ID, stored to find the attempt in a SIP trace.
      const callIds = items.map((i) => i.sipCallId);
      for (const id of callIds) assert.match(String(id), /^[^\s]+$/, 'every attempt that sent an INVITE keeps its Call-ID');
      assert.equal(new Set(callIds).size, callIds.length, 'one Call-ID per attempt');
      const retry = items.find((i) => i.messageId === placed.get('busy')!.messageId && i.attempt === 2)!;
      assert.equal(Date.parse(String(retry.startedAt)), clock.now(), 'the retry started when it was placed');
    });

    it('shows a never-connected call with an empty transcript, and filters by outcome', async () => {
      const list = (await (await api('/v1/tenants/acme/calls?outcome=no_answer')).json()) as { items: Array<{ id: string; messageId: string }> };
      assert.deepEqual(list.items.map((i) => i.messageId), [placed.get('no answer')!.messageId]);
      const detail = (await (await api(`/v1/tenants/acme/calls/${list.items[0]!.id}`)).json()) as { transcript: unknown[]; analysis: { status: string; webhook: unknown } };
      assert.deepEqual(detail.transcript, []);
      assert.deepEqual([detail.analysis.status, detail.analysis.webhook], ['skipped', null]);
    });

    it('puts each attempt in the Master Report', async () => {
      const res = await api('/v1/tenants/acme/reports/master.csv?direction=outbound');
      assert.equal(res.status, 200);
      const rows = parse(await res.text(), { columns: true }) as Array<Record<string, string>>;
      for (const c of cases) {
        const p = placed.get(c.name)!;
        const mine = rows.filter((r) => r.message_id === p.messageId).sort((a, b) => Number(a.attempt) - Number(b.attempt));
        assert.deepEqual(mine.map((r) => [Number(r.attempt), r.outcome, Number(r.sip_status)]), c.expected, c.name);
        for (const r of mine) {
          assert.deepEqual([r.direction, r.campaign_id, r.campaign_name, r.contact_number, r.end_reason, r.analysis_status, r.answered_at, r.duration_seconds], ['outbound', p.campaignId, `Never connected ${cases.indexOf(c) + 1}`, p.to, r.outcome, 'skipped', '', '0']);
        }
      }
    });

    it('writes no second record when the same attempt is settled again', async () => {
      const p = placed.get('503')!;
      const before = await fx.store.db.selectFrom('calls').select(['id', 'outcome']).where('message_id', '=', p.messageId).execute();
      assert.equal(before.length, 1);
      // As if lease recovery settled the attempt after the live worker had (a race the status guard
      // usually stops): the attempt row changes again, the call record must not double.
      await fx.store.db.updateTable('campaign_attempts').set({ status: 'dialing', lease_until: new Date(clock.now() - 1) }).where('message_id', '=', p.messageId).execute();
      assert.equal(await scheduler.recoverExpired(), 1);
      const after = await fx.store.db.selectFrom('calls').select(['id', 'outcome']).where('message_id', '=', p.messageId).execute();
      assert.deepEqual(after, before);
    });
  });
}
