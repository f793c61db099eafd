import type { TurnResult } from '../../llm/agent-engine.js';
import { extractBoolean, extractValue } from '../../llm/extract.js';
import { matchIntent } from '../../llm/offline-engine.js';
import type { SmartAiSettings } from '../recipe-schema.js';
import type { Heard } from '../runtime/conversation.js';

/** A competing reading this close to the best one makes the hearing doubtful: in confidence (cloud recognisers)... */
const RIVAL_MARGIN = 0.25;
/**
 * ...or in likelihood per 10 ms (the offline recogniser): measured on flite answers, readings a
 * caller could not be told apart from ("no" / "nope") come within 1, a different answer that
 * merely fits the words ("pay now" / "pay later") 4 to 8 behind.
 */
const RIVAL_SCORE_GAP = 2;

/** What a turn decided, as a comparable key: its intent, else the values it captured; undefined: nothing. */
export function decisionOf(result: Pick<TurnResult, 'intent' | 'values'>): string | undefined {
  if (result.intent) return `intent:${result.intent}`;
  const values = Object.entries(result.values).sort(([a], [b]) => a.localeCompare(b));
  return values.length > 0 ? `values:${JSON.stringify(values)}` : undefined;
}

/** The offline reading of a text: the intent its phrases name, else the values it states. */
function offlineDecision(text: string, settings: SmartAiSettings, today: string): string | undefined {
  const intent = matchIntent(settings.intents, text);
  if (intent) return `intent:${intent}`;
  const values: Record<string, string | number | boolean> = {};
  for (const variable of settings.variables) {
    if (variable.type === 'text') continue;
    const value = extractValue({ kind: variable.type, ...(variable.options ? { options: variable.options } : {}) }, text, today);
    if (value !== undefined) values[variable.name] = value;
  }
  return decisionOf({ values });
}

/**
 * The n-best check: a competing reading of the same audio, nearly as confident, that would take
 * the block somewhere else ("yes I can make it" / "yes I can't make it"). Both readings are read
 * the same offline way, whatever engine runs the block, so the check is about hearing, not about
 * the engine's judgement.
 */
export function rivalReading(heard: Heard, settings: SmartAiSettings, today: string): string | undefined {
  if (heard.kind !== 'utterance' || !heard.alternatives?.length) return undefined;
  const best = offlineDecision(heard.text, settings, today);
  const polar = heard.meaning === 'yes' || heard.meaning === 'no';
  for (const alternative of heard.alternatives) {
    const close = alternative.scoreGap !== undefined ? alternative.scoreGap < RIVAL_SCORE_GAP : alternative.confidence >= (heard.confidence ?? 1) - RIVAL_MARGIN;
    if (!close) continue;
    const other = offlineDecision(alternative.text, settings, today);
    // Values heard in the noise ("sunday eleven") do not compete with an intent; another intent does.
    if (other && other !== best && (other.startsWith('intent:') || !best?.startsWith('intent:'))) return alternative.text;
    // The grammar's reading without the winning phrases, nearly as likely and meaning nothing:
    // they explain the audio barely better than no answer at all (awb's "Who won the cricket
    // match?" was "do want goodbye it it that", a confident goodbye 1.5 per 10 ms ahead of "do
    // want it it that"; slt's "What is the meaning of life?" a yes 0.5 ahead of "and the my").
    const meaningless = !other && extractBoolean(alternative.text) === undefined;
    if (alternative.scoreGap !== undefined && meaningless && (best?.startsWith('intent:') || polar)) return alternative.text;
  }
  return undefined;
}

/**
 * A grammar-constrained recogniser says which expected phrases it heard (`meaning`). A decision
 * that those phrases do not support is doubtful: the engine took an intent from a stray word
 * ("today" read as "pay today") or from a bare yes/no that does not lead to that intent.
 */
export function meaningDisagrees(heard: Heard, decision: string | undefined, settings: SmartAiSettings): boolean {
  if (heard.kind !== 'utterance' || heard.meaning === undefined || !decision?.startsWith('intent:')) return false;
  if (heard.meaning === decision) return false;
  if (heard.meaning === 'yes' || heard.meaning === 'no') return `intent:${matchIntent(settings.intents, heard.meaning) ?? ''}` !== decision;
  return true;
}
