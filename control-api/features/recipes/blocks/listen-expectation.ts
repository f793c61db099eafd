import type { ListenExpectation, PhraseGroup, SpokenValue } from '../../../../core/ports/conversation.js';
import type { VariableSpec } from '../../../platform/llm/agent-engine.js';
import type { ExtractedVariable, SmartAiSettings } from '../../../model/recipes/recipe-schema.js';

/** Answers to a yes/no question (and to "Did you say ...?"), with the Hindi ones callers mix in. */
export const yesPhrases: readonly string[] = ['yes', 'yeah', 'yep', 'yes please', 'sure', 'okay', 'haan ji', 'ji haan'];
export const noPhrases: readonly string[] = ['no', 'nope', 'no thanks', 'not really', 'nahi', 'nahi ji', 'nahin'];
/**
 * Hedges: no answer yet, and nothing to act on. Heard as their own meaning so that the recogniser
 * does not bend "I don't know" into a "no" (the block reprompts on them).
 */
export const unsurePhrases: readonly string[] = ["i don't know", 'i do not know', 'not sure', "i'm not sure", 'let me think', 'maybe'];

export const spacedName = (name: string): string => name.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/_/g, ' ').toLowerCase();

const valueOf: Partial<Record<string, SpokenValue>> = { date: 'date', number: 'number', digits: 'digits' };

/** A block's variable as the engines and extractors take it (one mapping, so none misses a field). */
export function variableSpec(v: ExtractedVariable): VariableSpec {
  return { name: v.name, description: v.description, kind: v.type, options: v.options, ...(v.length ? { length: v.length } : {}) };
}

/** The one length these variables share, if they do (a digit string without one, or an amount, has none). */
function sharedLength(variables: readonly ExtractedVariable[]): number | undefined {
  const lengths = new Set(variables.map((v) => (v.type === 'digits' ? v.length : undefined)));
  return lengths.size === 1 ? [...lengths][0] : undefined;
}

/**
 * The length every value a keypad can give here has, when there is one: each such variable is a
 * digit string of that length (an amount beside it has none, so its entry needs the terminator).
 */
export function keyedLength(variables: readonly ExtractedVariable[]): number | undefined {
  return sharedLength(variables.filter((v) => v.type === 'digits' || v.type === 'number'));
}

/**
 * Everything a SmartAI or Ask block can act on, for the recogniser: one phrase group per intent
 * (its examples and its name, "pay now"), per enum option, and yes / no; the spoken values its
 * variables take (dates, amounts, digit strings). Free text cannot be expected; the number's
 * boosted keywords are added by the voice pipeline.
 */
export function expectationFor(settings: SmartAiSettings): ListenExpectation {
  const phrases: PhraseGroup[] = [
    { name: 'yes', phrases: yesPhrases, neutral: true },
    { name: 'no', phrases: noPhrases, neutral: true },
    { name: 'unsure', phrases: unsurePhrases },
  ];
  for (const intent of settings.intents) phrases.push({ name: `intent:${intent.name}`, phrases: [spacedName(intent.name), ...intent.examples] });
  const values = new Set<SpokenValue>();
  for (const variable of settings.variables) {
    for (const option of variable.options ?? []) phrases.push({ name: `option:${variable.name}:${option}`, phrases: [option] });
    const value = valueOf[variable.type];
    if (value) values.add(value);
  }
  // One length for every digit string the block takes; with several that differ, any length.
  const digitCount = sharedLength(settings.variables.filter((v) => v.type === 'digits'));
  // A keyed entry of that length is complete at its last digit: no terminator to wait for (the
  // schema keeps maxDigits at or above every length).
  const keyed = keyedLength(settings.variables);
  const dtmf = keyed ? { ...settings.dtmf, maxDigits: keyed } : settings.dtmf;
  return { phrases, values: [...values], ...(digitCount ? { digitCount } : {}), dtmf };
}
