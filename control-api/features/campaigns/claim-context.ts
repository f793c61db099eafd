import { sql, type Selectable, type Transaction } from 'kysely';
import { campaignSchema, type CampaignSpec } from '../../model/domain/campaign.js';
import type { CampaignMessagesTable, Database } from '../../platform/store/schema.js';
import { resolveWindow } from './retry-policy.js';
import type { CallingWindow } from './working-window.js';

// What the scheduler reads to decide on a message: campaign, number, window, concurrency.

/** Attempt statuses that hold a line: claimed (INVITE not sent yet), dialing (it may have left), ringing, answered. */
export const activeStatuses = ['claimed', 'dialing', 'ringing', 'answered'] as const;

export interface CampaignContext {
  readonly spec: CampaignSpec;
  readonly published: boolean;
  readonly recipe_id: string;
  readonly number_id: string;
  readonly e164: string;
  readonly sip_trunk_id: string | null;
  readonly enabled: boolean;
  readonly timezone: string;
  readonly window: CallingWindow | undefined;
}

/** The campaign, its number and window, read once per campaign per claiming transaction. */
export async function campaignContext(trx: Transaction<Database>, message: Pick<Selectable<CampaignMessagesTable>, 'campaign_id' | 'tenant_id'>, cache: Map<string, CampaignContext>): Promise<CampaignContext> {
  const cached = cache.get(message.campaign_id);
  if (cached) return cached;
  const row = await trx
    .selectFrom('campaigns')
    .innerJoin('phone_numbers', (j) => j.onRef('phone_numbers.id', '=', 'campaigns.phone_number_id').onRef('phone_numbers.tenant_id', '=', 'campaigns.tenant_id'))
    .innerJoin('tenants', 'tenants.id', 'campaigns.tenant_id')
    .select(['campaigns.spec', 'campaigns.published', 'campaigns.recipe_id', 'phone_numbers.id as number_id', 'phone_numbers.e164', 'phone_numbers.sip_trunk_id', 'phone_numbers.enabled', 'tenants.timezone'])
    .where('campaigns.id', '=', message.campaign_id)
    .executeTakeFirstOrThrow();
  const spec = campaignSchema.parse(row.spec);
  const context: CampaignContext = { ...row, spec, window: await resolveWindow(trx, message.tenant_id, row.timezone, spec) };
  cache.set(message.campaign_id, context);
  return context;
}

/**
 * Concurrency limits (campaign, and the outbound number across campaigns). Advisory locks
 * serialise the count-then-claim of concurrent workers per campaign / number.
 */
export async function belowLimits(trx: Transaction<Database>, campaignId: string, fromE164: string, spec: CampaignSpec): Promise<boolean> {
  if (spec.maxConcurrentCalls !== undefined) {
    await sql`SELECT pg_advisory_xact_lock(hashtext(${`campaign:${campaignId}`}))`.execute(trx);
    const { n } = await trx.selectFrom('campaign_attempts').select((eb) => eb.fn.countAll<string>().as('n')).where('campaign_id', '=', campaignId).where('status', 'in', activeStatuses).executeTakeFirstOrThrow();
    if (Number(n) >= spec.maxConcurrentCalls) return false;
  }
  if (spec.maxConcurrentCallsPerNumber !== undefined) {
    await sql`SELECT pg_advisory_xact_lock(hashtext(${`number:${fromE164}`}))`.execute(trx);
    const { n } = await trx.selectFrom('campaign_attempts').select((eb) => eb.fn.countAll<string>().as('n')).where('from_e164', '=', fromE164).where('status', 'in', activeStatuses).executeTakeFirstOrThrow();
    if (Number(n) >= spec.maxConcurrentCallsPerNumber) return false;
  }
  return true;
}
