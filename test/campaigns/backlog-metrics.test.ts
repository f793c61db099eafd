import assert from 'node:assert/strict';
import { FakeClock } from '../../core/clock.js';
import { metricsRegistry } from '../../core/metrics.js';
import { acceptMessage } from '../../control-api/features/campaigns/accept-message.js';
import { watchCampaignBacklog } from '../../control-api/features/campaigns/campaign-backlog.js';
import type { CampaignSpec } from '../../control-api/model/domain/campaign.js';
import { campaignDoc, numberDoc, recipeDoc, testBox } from '../helpers/resource-documents.js';
import { createResourceDefinitions } from '../../control-api/model/resources/registry.js';
import { forEachStore } from '../helpers/stores.js';

async function scrape(): Promise<string> {
  return (await metricsRegistry.getSingleMetricAsString('vap_campaign_backlog_messages')) + '\n' + (await metricsRegistry.getSingleMetricAsString('vap_campaign_backlog_oldest_seconds'));
}

/** Issue 14: the campaign backlog (due, not yet dialled) on /metrics, read from the store at scrape time. */
forEachStore('campaign backlog gauges', (store) => {
  it('counts scheduled messages whose time has come, by wait reason, and how long the oldest has waited', async () => {
    const db = store().db;
    const clock = new FakeClock(Date.parse('2026-06-01T06:00:00Z'));
    const defs = createResourceDefinitions({ secretBox: testBox() });
    const tenant = await db.insertInto('tenants').values({ client_id: 'backlog', name: 'Backlog' }).returning('id').executeTakeFirstOrThrow();
    await defs.recipe.repository.create(db, tenant.id, recipeDoc('Flow') as never);
    await defs.phoneNumber.repository.create(db, tenant.id, numberDoc('+914440008001', 'Flow') as never);
    const campaign = await defs.campaign.repository.create(db, tenant.id, campaignDoc('Backlog', '+914440008001', 'Flow', { published: true }) as CampaignSpec);
    const send = (to: string, at: number) => acceptMessage(db, tenant.id, { campaignId: campaign.id, to, variables: {}, scheduledAt: at, bypassCallingWindow: true }, { now: clock.now() });
    const due = [await send('+919800000001', clock.now()), await send('+919800000002', clock.now()), await send('+919800000003', clock.now())];
    await send('+919800000004', clock.now() + 3_600_000);
    await db.updateTable('campaign_messages').set({ wait_reason: 'retry' }).where('id', '=', due[2]!.messageId).execute();

    const unwatch = watchCampaignBacklog({ db, clock });
    try {
      clock.advance(90_000);
      let text = await scrape();
      assert.match(text, /^vap_campaign_backlog_messages\{reason="initial"\} 2$/m);
      assert.match(text, /^vap_campaign_backlog_messages\{reason="retry"\} 1$/m);
      assert.match(text, /^vap_campaign_backlog_oldest_seconds 90$/m, 'due 90 s ago');
      // One is being dialled now: no longer backlog; the one due in an hour never was.
      await db.updateTable('campaign_messages').set({ status: 'calling' }).where('id', '=', due[0]!.messageId).execute();
      text = await scrape();
      assert.match(text, /^vap_campaign_backlog_messages\{reason="initial"\} 1$/m);
      clock.advance(3_600_000);
      assert.match(await scrape(), /^vap_campaign_backlog_messages\{reason="initial"\} 2$/m);
    } finally {
      unwatch();
    }
    assert.doesNotMatch(await scrape(), /^vap_campaign_backlog_messages\{/m, 'nothing reported once unwatched');
  });
});
