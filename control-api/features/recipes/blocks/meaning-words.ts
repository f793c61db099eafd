import type { VariableValue } from '../../../platform/llm/agent-engine.js';
import type { DtmfSettings, ExtractedVariable, Intent } from '../../../model/recipes/recipe-schema.js';
import { render } from '../runtime/templating.js';
import { keyedLength, spacedName } from './listen-expectation.js';

/**
 * How the agent puts what it understood into words a caller can answer: an intent as its meaning
 * ("you want to cancel the appointment"), a value as it would be stored ("Saturday 5 December",
 * an order number digit by digit), and the question that asks for one value alone. Never the
 * words the recogniser heard: those may be noise ("did you say: august four may eighth?").
 */

const weekdayNames = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const monthNames = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const dayMs = 86_400_000;

/**
 * A stored value as the agent says it. A date is its weekday, day and month ("Saturday 5
 * December", which speech normalisation reads "Saturday the fifth of December"), with the year
 * only when it is not within the coming eleven months; digits stay digits (read one by one, see
 * `spellOut`); a yes/no is "yes" or "no".
 */
export function spokenValue(type: ExtractedVariable['type'] | undefined, value: VariableValue, today: string): string {
  if (type === 'boolean' || typeof value === 'boolean') return value ? 'yes' : 'no';
  if (type === 'date' && typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value)) {
    const date = new Date(`${value}T00:00:00Z`);
    const ahead = (date.getTime() - new Date(`${today}T00:00:00Z`).getTime()) / dayMs;
    const year = ahead < 0 || ahead > 330 ? ` ${date.getUTCFullYear()}` : '';
    return `${weekdayNames[date.getUTCDay()]} ${date.getUTCDate()} ${monthNames[date.getUTCMonth()]}${year}`;
  }
  return String(value);
}

/** Values the speech must read character by character (digit strings: 123456 is no amount). */
export function spellOut(variables: readonly ExtractedVariable[], values: Readonly<Record<string, VariableValue>>): string[] {
  return variables.filter((v) => v.type === 'digits' && values[v.name] !== undefined).map((v) => String(values[v.name]));
}

/** Verbs a description starts a clause with ("caller says no and wants to cancel"), for "you". */
const clauseVerbs: Readonly<Record<string, string>> = {
  is: 'are', was: 'were', has: 'have', does: 'do', says: 'say', wants: 'want', asks: 'ask', needs: 'need', agrees: 'agree', promises: 'promise',
  disputes: 'dispute', confirms: 'confirm', cancels: 'cancel', refuses: 'refuse', declines: 'decline', accepts: 'accept', requests: 'request',
  prefers: 'prefer', likes: 'like', cannot: 'cannot', can: 'can', will: 'will', would: 'would',
};
const pronouns: Readonly<Record<string, string>> = { they: 'you', them: 'you', their: 'your', theirs: 'yours', themselves: 'yourself', "caller's": 'your', "customer's": 'your' };
const subject = /^(?:the\s+)?(?:caller|customer|user|client|person)\s+/i;

/** "the caller prefers" -> "you prefer": third person about the caller, said to the caller. */
function toCaller(text: string): string {
  const words = text.replace(/\bthe (?:caller|customer|user)('s)?\b/gi, (_all, s: string | undefined) => (s ? "caller's" : 'you')).split(/\s+/);
  return words
    .map((word, i) => {
      const bare = word.toLowerCase().replace(/[,.;:]$/, '');
      const tail = word.slice(bare.length);
      const before = (words[i - 1] ?? '').toLowerCase();
      const clauseStart = i === 0 || before === 'you' || before === 'and' || before === 'or' || /,$/.test(before);
      if (pronouns[bare]) return pronouns[bare] + tail;
      if (clauseStart && clauseVerbs[bare]) return clauseVerbs[bare] + tail;
      // A description's first word is its verb ("disputes the amount"); after a comma only known verbs.
      if (i === 0 && /[^s]s$/.test(bare)) return bare.replace(/(ss|sh|ch|x|z|o)es$/, '$1').replace(/ies$/, 'y').replace(/s$/, '') + tail;
      return word;
    })
    .join(' ');
}

/** An intent as words said to the caller: its `confirmation`, else its description made second person. */
export function intentMeaning(intent: Intent): string {
  if (intent.confirmation?.trim()) return intent.confirmation.trim();
  const description = intent.description.trim().replace(/[.!]+$/, '');
  if (subject.test(description)) return `you ${toCaller(description.replace(subject, ''))}`;
  return `you mean "${intent.examples[0] ?? spacedName(intent.name)}"`;
}

/**
 * "Just to check: ...?" for a decision: the intent's meaning with the values in it (placeholders
 * of its `confirmation`) and the other values after it, each as it would be stored; values alone
 * (an Ask's answer) are the question by themselves.
 */
export function confirmationQuestion(
  intent: Intent | undefined,
  values: Readonly<Record<string, VariableValue>>,
  variables: readonly ExtractedVariable[],
  today: string,
  lookup: (name: string) => unknown,
): string {
  const typeOf = (name: string): ExtractedVariable['type'] | undefined => variables.find((v) => v.name === name)?.type;
  const spoken = (name: string): string => spokenValue(typeOf(name), values[name] as VariableValue, today);
  const used = new Set<string>();
  let meaning = '';
  if (intent) {
    const unknown = (intent.captures ?? []).filter((name) => !(name in values) && isBlank(lookup(name)));
    meaning = render(withoutPlaceholders(intentMeaning(intent), unknown), {
      lookup: (name) => {
        if (!(name in values)) return lookup(name);
        used.add(name);
        return spoken(name);
      },
    });
  }
  const rest = Object.keys(values)
    .filter((name) => !used.has(name))
    .map((name) => (typeOf(name) === 'boolean' && !intent ? `you said ${spoken(name)}` : spoken(name)));
  const said = [meaning, rest.join(', ')].filter(Boolean).join(', ');
  return `Just to check: ${said}?`;
}

/** No value: unset, null or empty text. */
export const isBlank = (value: unknown): boolean => value === undefined || value === null || value === '';

/** Words that only introduce the value after them ("pay {{promise_amount}} on {{promise_date}}"). */
const valuePrepositions = 'on|at|by|for|to|of|in|from|before|until|around|about';

/**
 * The confirmation without the placeholders of values nobody has said, each with the preposition
 * that introduced it: "you will pay {{promise_amount}} on {{promise_date}}" with neither known is
 * "you will pay", not "you will pay on".
 */
function withoutPlaceholders(template: string, names: readonly string[]): string {
  return names.reduce(
    (text, name) => text.replace(new RegExp(`(?:\\s+(?:${valuePrepositions}))?\\s*\\{\\{\\s*${name}\\s*\\}\\}`, 'gi'), ''),
    template,
  );
}

/** A variable as a noun phrase said to the caller: "the new date you prefer", "the order number". */
export function variableNoun(variable: ExtractedVariable): string {
  const described = variable.description.split(/[,;(]/)[0]?.trim().replace(/[.!?]+$/, '') ?? '';
  const phrase = described ? toCaller(described.replace(/^([A-Z])(?![A-Z])/, (c) => c.toLowerCase())) : spacedName(variable.name);
  return /^(the|a|an|your|my|this|that)\b/i.test(phrase) ? phrase : `the ${phrase}`;
}

/**
 * "You can also key it in, then press hash." for values a keypad can give (digits, amounts); "You
 * can also key in the 6 digits." when each is a digit string of that length (`keyedLength`), whose
 * entry ends at its last digit so the terminator is not needed.
 */
export function keypadHint(variables: readonly ExtractedVariable[], dtmf: DtmfSettings): string {
  if (!variables.some((v) => v.type === 'digits' || v.type === 'number')) return '';
  const length = keyedLength(variables);
  if (length !== undefined) return `You can also key in the ${length === 1 ? 'digit' : `${length} digits`}.`;
  const key = dtmf.terminator === '#' ? 'hash' : dtmf.terminator === '*' ? 'star' : '';
  return key ? `You can also key it in, then press ${key}.` : 'You can also key it in.';
}

/** Mentions the keypad already ("press", "key in", "dial")? Then no hint is added. */
export const mentionsKeypad = (text: string): boolean => /\b(key|keypad|press|dial|type)\b/i.test(text);

/**
 * The question for one or more values alone: after the caller said no to their reading back
 * (`again`), or for what an intent still lacks. The variable's own `question`, else a request for
 * them ("Could you tell me the amount you promise to pay and the date you promise to pay on again?").
 */
export function valueQuestion(variables: readonly ExtractedVariable[], again = true): string {
  const own = variables.length === 1 ? variables[0]?.question?.trim() : undefined;
  if (own) return own;
  return `Could you tell me ${variables.map(variableNoun).join(' and ')}${again ? ' again' : ''}?`;
}
