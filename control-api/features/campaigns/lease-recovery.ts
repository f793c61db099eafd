import type { Kysely } from 'kysely';
import type { Clock } from '../../../core/clock.js';
import type { Logger } from '../../../core/logger.js';
import { campaignSchema } from '../../model/domain/campaign.js';
import type { Database } from '../../platform/store/schema.js';
import type { AttemptOutcomes, Unanswered } from './attempt-outcomes.js';
import { activeStatuses } from './claim-context.js';

/**
 * Settles attempts whose worker stopped renewing the lease (killed, crashed or cut off from the
 * database), by how far they got, so a crash neither rings a callee twice nor drops a call that
 * never rang:
 *  - `claimed`: the INVITE never left (`dialing` is committed before it does). The attempt is
 *    handed back to the queue and placed once by whichever worker takes it.
 *  - `dialing` / `ringing`: the callee may have rung, and what happened is unknown. Settled
 *    `failed` (reason `worker-lost`) and not retried whatever the campaign's retry scenarios:
 *    a retry would ring a callee who may have been rung already (and may even have answered).
 *  - `answered`: `completed` (reason `worker-lost`).
 * Every change is guarded by the attempt's status, so a worker that is alive after all and
 * reports later changes nothing.
 */
export interface LeaseRecoveryDeps {
  readonly db: Kysely<Database>;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly outcomes: AttemptOutcomes;
}

export async function recoverExpiredAttempts(deps: LeaseRecoveryDeps, limit: number): Promise<number> {
  const now = new Date(deps.clock.now());
  const expired = await deps.db
    .selectFrom('campaign_attempts')
    .innerJoin('campaign_messages', 'campaign_messages.id', 'campaign_attempts.message_id')
    .innerJoin('campaigns', 'campaigns.id', 'campaign_messages.campaign_id')
    .selectAll('campaign_messages')
    .select(['campaign_attempts.attempt_no', 'campaign_attempts.status as attempt_status', 'campaign_attempts.worker_id', 'campaigns.spec as campaign_spec'])
    .where('campaign_attempts.status', 'in', activeStatuses)
    .where('campaign_attempts.lease_until', '<', now)
    .limit(limit)
    .execute();
  if (expired.length === 0) return 0;
  const byStatus = (status: string) => expired.filter((row) => row.attempt_status === status);
  const workers = [...new Set(expired.map((row) => row.worker_id))];
  deps.logger.warn(
    { workers, claimed: byStatus('claimed').length, dialing: byStatus('dialing').length + byStatus('ringing').length, answered: byStatus('answered').length },
    'campaign call leases expired: handing back the calls never dialled, settling the others as worker-lost',
  );

  const released = await deps.outcomes.release(byStatus('claimed').map((row) => ({ messageId: row.id, attemptNo: row.attempt_no })), { expiredBefore: now });
  const lost: Unanswered[] = expired
    .filter((row) => row.attempt_status === 'dialing' || row.attempt_status === 'ringing')
    .map(({ attempt_no, attempt_status: _status, worker_id: _worker, campaign_spec, ...message }) => ({
      message,
      attemptNo: attempt_no,
      spec: campaignSchema.parse(campaign_spec),
      outcome: 'failed',
      reason: 'worker-lost',
      final: true,
    }));
  await deps.outcomes.finishUnansweredMany(lost);
  for (const row of byStatus('answered')) {
    const { attempt_no, attempt_status: _status, worker_id: _worker, campaign_spec: _spec, ...message } = row;
    await deps.outcomes.complete(message, attempt_no, 'worker-lost');
  }
  deps.logger.info({ handedBack: released.length, lost: lost.length, completed: byStatus('answered').length }, 'expired campaign call leases settled');
  return expired.length;
}
