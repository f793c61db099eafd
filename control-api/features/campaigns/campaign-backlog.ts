import { sql, type Kysely } from 'kysely';
import type { Clock } from '../../../core/clock.js';
import { sampledGauge, type Sample } from '../../../core/metrics.js';
import type { Database } from '../../platform/store/schema.js';

interface BacklogSource {
  readonly db: Kysely<Database>;
  readonly clock: Clock;
}

/** The stores whose backlog this process reports (one worker in production). */
const sources = new Set<BacklogSource>();

interface BacklogRow {
  readonly reason: string;
  readonly n: number;
  readonly oldest: Date | string | null;
}

/**
 * Due and not dialled: scheduled messages whose next attempt time has passed, by why they waited
 * (`initial`, `retry`, `window`, `concurrency`). One grouped query on the partial index of due
 * messages (`campaign_messages_due_idx`), run at scrape time only, so an idle platform costs
 * nothing between scrapes, PGlite included.
 */
async function backlog(): Promise<{ byReason: Sample[]; oldest: Sample[] }> {
  const byReason = new Map<string, number>();
  let oldestAgeS = 0;
  for (const { db, clock } of sources) {
    const now = clock.now();
    let rows: BacklogRow[];
    try {
      const result = await sql<BacklogRow>`
        SELECT wait_reason AS reason, count(*)::int AS n, min(next_attempt_at) AS oldest
        FROM campaign_messages
        WHERE status = 'scheduled' AND next_attempt_at <= ${new Date(now)}
        GROUP BY wait_reason`.execute(db);
      rows = result.rows;
    } catch {
      // A store that cannot answer (closing, unreachable) leaves its series out of this scrape;
      // /readyz reports the database itself.
      continue;
    }
    for (const row of rows) {
      byReason.set(row.reason, (byReason.get(row.reason) ?? 0) + Number(row.n));
      if (row.oldest !== null) oldestAgeS = Math.max(oldestAgeS, (now - new Date(row.oldest).getTime()) / 1000);
    }
  }
  return { byReason: [...byReason].map(([reason, n]) => [{ reason }, n] as Sample), oldest: [[{}, oldestAgeS]] };
}

// Both gauges read the same query: one scrape runs it once for each (cheap; no cache to go stale).
sampledGauge(
  'campaign_backlog_messages',
  'Campaign messages due and not dialled yet (scheduled, next attempt time passed), by why they waited: initial, retry, window, concurrency',
  ['reason'],
  async () => (await backlog()).byReason,
);
sampledGauge('campaign_backlog_oldest_seconds', 'How long the oldest due, not yet dialled campaign message has been due (0 when none is)', [], async () => (await backlog()).oldest);

/** Reports this store's campaign backlog on /metrics until the returned function is called. */
export function watchCampaignBacklog(source: BacklogSource): () => void {
  sources.add(source);
  return () => sources.delete(source);
}
