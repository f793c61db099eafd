import type { Transaction } from 'kysely';
import type { ConversationEnded, EndedConversation } from '../calls/call-recorder.js';
import { insightParameterListSchema, type InsightParameter } from '../../model/domain/insight-parameter.js';
import type { Database } from '../../platform/store/schema.js';
import { enqueueJob, type ExtractPayload } from './analysis-jobs.js';

/** How long after hang-up analysis may still complete (spec: up to 5 minutes). */
export const defaultAnalysisWindowMs = 5 * 60_000;

/**
 * The recorder's hook for a conversation that ended: queues its insight extraction in the
 * transaction that stores the call, so a crash right after hang-up can neither lose the analysis
 * nor analyse a half-written call. The recorder (calls) knows nothing of insights; insights
 * supplies this where the recorder is built.
 */
export function queueCallAnalysis(options: { readonly analysisWindowMs?: number } = {}): ConversationEnded {
  const windowMs = options.analysisWindowMs ?? defaultAnalysisWindowMs;
  return async (trx: Transaction<Database>, ended: EndedConversation) => {
    const parameters = ended.insightParameters ?? (await recipeInsights(trx, ended.tenantId, ended.recipeId));
    const payload: ExtractPayload = { parameters };
    await enqueueJob(trx, {
      callId: ended.callId,
      tenantId: ended.tenantId,
      kind: 'extract',
      runAt: new Date(ended.now),
      deadlineAt: new Date(Math.max(ended.now, ended.endedAt.getTime()) + windowMs),
      payload,
    });
  };
}

/** The recipe's insight parameters as stored now; none when the recipe is gone or has none. */
async function recipeInsights(db: Transaction<Database>, tenantId: string, recipeId: string | null): Promise<InsightParameter[]> {
  if (!recipeId) return [];
  const row = await db.selectFrom('recipes').select('spec').where('tenant_id', '=', tenantId).where('id', '=', recipeId).executeTakeFirst();
  const spec = row?.spec as { globalSettings?: { insights?: unknown } } | undefined;
  const parsed = insightParameterListSchema.safeParse(spec?.globalSettings?.insights ?? []);
  return parsed.success ? parsed.data : [];
}
