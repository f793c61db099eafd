import type { Schemas } from '../api/client';

type Call = Schemas['Call'];

/** What the dashboard shows for a call's state (spec: "Analyzing Your Call..." until insights land). */
export function liveStatus(call: Pick<Call, 'status' | 'outcome' | 'analysis'>): { text: string; final: boolean } {
  if (call.status === 'in_progress') return { text: 'In progress', final: false };
  switch (call.analysis.status) {
    case 'pending':
    case 'analyzing':
      return { text: 'Analyzing Your Call...', final: false };
    case 'completed':
      return { text: 'Insights ready', final: true };
    case 'failed':
      return { text: 'Analysis failed', final: true };
    default:
      return { text: call.outcome ? `Ended: ${call.outcome.replace('_', ' ')}` : 'Ended', final: true };
  }
}
