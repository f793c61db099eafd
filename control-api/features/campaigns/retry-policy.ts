import type { Kysely } from 'kysely';
import type { OriginateOutcome } from '../../../core/ports/originator.js';
import { businessHoursSchema } from '../../model/domain/business-hours.js';
import type { CampaignSpec, RetryScenario } from '../../model/domain/campaign.js';
import type { Database } from '../../platform/store/schema.js';
import type { CallingWindow } from './working-window.js';

/** Which campaign retry scenario an unanswered outcome falls under (spec: Retry scenarios). */
const scenarioOf: Readonly<Record<Exclude<OriginateOutcome, 'answered'>, RetryScenario>> = {
  busy: 'busy',
  'no-answer': 'noAnswer',
  failed: 'failed',
};

export type RetryDecision = { readonly retry: true; readonly at: number } | { readonly retry: false; readonly reason: string };

/**
 * After attempt `attemptNo` ended with `outcome`: retry once the interval has passed when the
 * campaign lists the scenario and retries remain (maxRetries counts retries, so a campaign makes
 * at most 1 + maxRetries attempts). The retry is then subject to the working window again.
 */
export function decideRetry(spec: Pick<CampaignSpec, 'maxRetries' | 'retryIntervalMinutes' | 'retryScenarios'>, attemptNo: number, outcome: Exclude<OriginateOutcome, 'answered'>, endedAt: number): RetryDecision {
  if (!spec.retryScenarios.includes(scenarioOf[outcome])) return { retry: false, reason: `${outcome} is not a retry scenario of the campaign` };
  if (attemptNo > spec.maxRetries) return { retry: false, reason: `retries exhausted (${spec.maxRetries})` };
  return { retry: true, at: endedAt + spec.retryIntervalMinutes * 60_000 };
}

/**
 * The campaign's working window as the calculator wants it: custom ranges and business-hours
 * profiles default to the tenant's dashboard timezone. Undefined when the profile is missing.
 */
export async function resolveWindow(db: Kysely<Database>, tenantId: string, tenantTimezone: string, spec: CampaignSpec): Promise<CallingWindow | undefined> {
  const window = spec.workingWindow;
  if (!window.enabled) return { kind: 'always' };
  if (window.mode === 'custom') {
    return { kind: 'custom', start: window.start ?? '00:00', end: window.end ?? '00:00', timezone: window.timezone ?? tenantTimezone };
  }
  const row = await db
    .selectFrom('business_hours_profiles')
    .select('spec')
    .where('tenant_id', '=', tenantId)
    .where('name', '=', window.profile ?? '')
    .executeTakeFirst();
  if (!row) return undefined;
  const profile = businessHoursSchema.parse(row.spec);
  return { kind: 'businessHours', profile, timezone: profile.timezone ?? tenantTimezone };
}
