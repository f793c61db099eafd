import type { VariableKind, VariableSpec, VariableValue } from './agent-engine.js';

/**
 * Deterministic value extraction from one utterance. English first, plus common romanised Hindi
 * and Arabic yes/no words; anything cleverer needs a model (see docs/recipes.md).
 */
const yesWords = new Set([
  'yes', 'yeah', 'yep', 'yup', 'sure', 'ok', 'okay', 'correct', 'right', 'definitely', 'absolutely',
  'confirm', 'confirmed', 'affirmative', 'haan', 'han', 'ha', 'ji', 'theek', 'thik', 'naam', 'aiwa',
  'हाँ', 'हां', 'जी', 'نعم', 'أيوه',
]);
const noWords = new Set(['no', 'nope', 'nah', 'not', 'never', 'negative', 'nahi', 'nahin', 'na', 'नहीं', 'ना', 'لا']);

export function normalize(text: string): string {
  // Typographic apostrophes ("don’t", "I’ll") are the same apostrophe.
  return text.normalize('NFKC').toLowerCase().replace(/[\u2018\u2019\u02bc]/g, "'").replace(/[^\p{L}\p{N}\p{M}'\s/-]/gu, ' ').replace(/\s+/g, ' ').trim();
}

export function tokens(text: string): string[] {
  return normalize(text).split(/[\s/-]+/).filter((t) => t.length > 0);
}

export function extractBoolean(text: string): boolean | undefined {
  const words = tokens(text);
  const yes = words.some((w) => yesWords.has(w));
  const no = words.some((w) => noWords.has(w));
  if (yes && !no) return true;
  if (no && !yes) return false;
  // "yes, I don't" style answers are ambiguous: the first polar word decides.
  if (yes && no) return yesWords.has(words.find((w) => yesWords.has(w) || noWords.has(w)) ?? '');
  return undefined;
}

/** Does the text hold a word of the answer `answer` (true: a yes word, false: a no word), whatever else it holds? */
export function holdsAnswer(text: string, answer: boolean): boolean {
  const words = answer ? yesWords : noWords;
  return tokens(text).some((w) => words.has(w));
}

const units: Record<string, number> = {
  zero: 0, oh: 0, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10,
  eleven: 11, twelve: 12, thirteen: 13, fourteen: 14, fifteen: 15, sixteen: 16, seventeen: 17, eighteen: 18,
  nineteen: 19, twenty: 20, thirty: 30, forty: 40, fifty: 50, sixty: 60, seventy: 70, eighty: 80, ninety: 90,
};
const scales: Record<string, number> = { hundred: 100, thousand: 1_000, lakh: 100_000, lakhs: 100_000, million: 1_000_000, crore: 10_000_000 };

export function extractNumber(text: string): number | undefined {
  const digits = /-?\d[\d,]*(?:\.\d+)?/.exec(text.replace(/(\d),(?=\d{2,3}\b)/g, '$1'));
  if (digits) {
    const value = Number(digits[0].replace(/,/g, ''));
    if (Number.isFinite(value)) return value;
  }
  let total = 0;
  let current = 0;
  let seen = false;
  for (const word of tokens(text)) {
    if (word in units) {
      current += units[word] ?? 0;
      seen = true;
    } else if (word in scales) {
      const scale = scales[word] ?? 1;
      if (scale === 100) current = (current || 1) * 100;
      else {
        total += (current || 1) * scale;
        current = 0;
      }
      seen = true;
    } else if (word !== 'and' && seen) break;
  }
  return seen ? total + current : undefined;
}

export const months = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
export const weekdays = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
const ordinalWords: Record<string, number> = {
  first: 1, second: 2, third: 3, fourth: 4, fifth: 5, sixth: 6, seventh: 7, eighth: 8, ninth: 9, tenth: 10,
  eleventh: 11, twelfth: 12, thirteenth: 13, fourteenth: 14, fifteenth: 15, sixteenth: 16, seventeenth: 17,
  eighteenth: 18, nineteenth: 19, twentieth: 20, thirtieth: 30,
};
/** Words a spoken date or amount is made of (recognisers that need a vocabulary use them). */
export const numberWords: readonly string[] = [...Object.keys(units), ...Object.keys(scales), 'and', 'point'];
export const dateWords: readonly string[] = [...months, ...weekdays, ...Object.keys(ordinalWords), ...numberWords, 'today', 'tomorrow', 'next', 'this', 'week', 'on', 'of', 'the'];

/**
 * The day of the month written or spoken around a month name: "3", "3rd", "third",
 * "twenty fifth", "thirty first", "twenty five". `words` are the tokens on one side, nearest first.
 */
function dayOf(near: readonly (string | undefined)[]): number | undefined {
  const [first, second] = near;
  if (first === undefined) return undefined;
  const digits = parseInt(first, 10);
  if (Number.isInteger(digits)) return digits;
  const tens = (w: string | undefined): number | undefined => (w === 'twenty' ? 20 : w === 'thirty' ? 30 : undefined);
  const one = ordinalWords[first] ?? units[first];
  if (one !== undefined && one < 10 && tens(second) !== undefined) return (tens(second) as number) + one;
  return one;
}

/** Resolves ISO, D/M/Y, "15 March", "March 15", today/tomorrow/weekday names against `today`. */
export function extractDate(text: string, today: string): string | undefined {
  const iso = /\b(\d{4})-(\d{2})-(\d{2})\b/.exec(text);
  // A date that does not exist (a model's "2026-02-30") is no date: nothing is stored.
  if (iso) return ymd(Date.UTC(Number(iso[1]), Number(iso[2]) - 1, Number(iso[3]))) === iso[0] ? iso[0] : undefined;
  const base = new Date(`${today}T00:00:00Z`);
  const words = tokens(text);
  const dmy = /\b(\d{1,2})[/.](\d{1,2})[/.](\d{2,4})\b/.exec(text);
  if (dmy) {
    const year = Number(dmy[3]) < 100 ? 2000 + Number(dmy[3]) : Number(dmy[3]);
    return ymd(Date.UTC(year, Number(dmy[2]) - 1, Number(dmy[1])));
  }
  const [relative] = relativeDays(text);
  if (relative !== undefined) return addDays(today, relative);
  const monthIndex = words.findIndex((w) => months.some((m) => m === w || (w.length >= 3 && m.startsWith(w))));
  if (monthIndex !== -1) {
    const month = months.findIndex((m) => m === words[monthIndex] || m.startsWith(words[monthIndex] ?? '#'));
    // "3 December", "December 3rd", "the 3rd of December", "the twenty fifth of December", "December fifth".
    const before = words[monthIndex - 1] === 'of' ? monthIndex - 2 : monthIndex - 1;
    const candidates = [dayOf([words[before], words[before - 1]]), dayOfAfter(words, monthIndex + 1)];
    const day = candidates.find((n) => n !== undefined && Number.isInteger(n) && n >= 1 && n <= 31);
    if (day !== undefined) {
      let candidate = Date.UTC(base.getUTCFullYear(), month, day);
      if (candidate < base.getTime()) candidate = Date.UTC(base.getUTCFullYear() + 1, month, day);
      return ymd(candidate);
    }
  }
  const weekday = weekdays.findIndex((d) => words.includes(d));
  if (weekday !== -1) {
    const ahead = (weekday - base.getUTCDay() + 7) % 7 || 7;
    return ymd(base.getTime() + ahead * 86_400_000);
  }
  return undefined;
}

/**
 * The days from today each relative day in `text` names, in the order extractDate prefers them:
 * "today" 0, "tomorrow" 1 ("the day after tomorrow" 2), "yesterday" -1.
 */
export function relativeDays(text: string): number[] {
  const words = tokens(text);
  const afterTomorrow = ` ${words.join(' ')} `.includes(' day after tomorrow ');
  return [
    ...(words.includes('today') ? [0] : []),
    ...(words.includes('tomorrow') ? [afterTomorrow ? 2 : 1] : []),
    ...(words.includes('yesterday') ? [-1] : []),
  ];
}

/** The ISO date `days` after the ISO date `day` (before it when negative). */
export function addDays(day: string, days: number): string {
  return ymd(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000);
}

/** Reads "twenty fifth" forwards: the tens word comes first. */
function dayOfAfter(words: readonly string[], at: number): number | undefined {
  const first = words[at];
  if (first === 'twenty' || first === 'thirty') {
    const unit = ordinalWords[words[at + 1] ?? ''] ?? units[words[at + 1] ?? ''];
    return (first === 'twenty' ? 20 : 30) + (unit !== undefined && unit < 10 ? unit : 0);
  }
  return dayOf([first]);
}

const digitWords: Record<string, string> = { zero: '0', oh: '0', one: '1', two: '2', three: '3', four: '4', five: '5', six: '6', seven: '7', eight: '8', nine: '9' };
const repeats: Record<string, number> = { double: 2, triple: 3 };

/**
 * A string of digits as said or typed: "one two three four five six", "1 2 3 456", "double five
 * oh one", "123-456". The longest run wins (an order number among other words); leading zeros
 * are kept, so it is a string, never a number. With `length`, the first run of exactly that many
 * digits, else none: a six-digit order number heard or keyed as five digits is no value, not a
 * wrong one stored.
 */
export function extractDigits(text: string, length?: number): string | undefined {
  const runs: string[] = [];
  let run = '';
  let times = 1;
  for (const word of tokens(text.replace(/(\d)[-.\s](?=\d)/g, '$1'))) {
    const digit = /^\d+$/.test(word) ? word : digitWords[word];
    if (digit !== undefined) {
      run += digit.repeat(times);
      times = 1;
    } else if (repeats[word] !== undefined) times = repeats[word] ?? 1;
    else {
      if (run) runs.push(run);
      run = '';
      times = 1;
    }
  }
  if (run) runs.push(run);
  if (length !== undefined) return runs.find((r) => r.length === length);
  return runs.reduce<string | undefined>((best, r) => (r.length > (best?.length ?? 0) ? r : best), undefined);
}

export function extractEnum(text: string, options: readonly string[]): string | undefined {
  const said = ` ${normalize(text)} `;
  let best: string | undefined;
  for (const option of options) {
    const needle = normalize(option);
    if (needle && said.includes(` ${needle} `) && (!best || needle.length > normalize(best).length)) best = option;
  }
  return best;
}

export function extractValue(spec: Pick<VariableSpec, 'kind' | 'options' | 'length'>, text: string, today: string): VariableValue | undefined {
  const kind: VariableKind = spec.kind;
  switch (kind) {
    case 'boolean':
      return extractBoolean(text);
    case 'number':
      return extractNumber(text);
    case 'date':
      return extractDate(text, today);
    case 'enum':
      return extractEnum(text, spec.options ?? []);
    case 'digits':
      return extractDigits(text, spec.length);
    case 'text': {
      const trimmed = text.trim();
      return trimmed.length > 0 ? trimmed : undefined;
    }
  }
}

/** Coerces a value an LLM returned into the declared kind; undefined when it does not fit. */
export function coerceValue(spec: VariableSpec, raw: unknown, today: string): VariableValue | undefined {
  if (raw === null || raw === undefined || raw === '') return undefined;
  if (spec.kind === 'boolean' && typeof raw === 'boolean') return raw;
  if (spec.kind === 'number' && typeof raw === 'number' && Number.isFinite(raw)) return raw;
  if (spec.kind === 'digits' && typeof raw === 'number' && Number.isInteger(raw) && raw >= 0) return extractDigits(String(raw), spec.length);
  if (spec.kind === 'enum') {
    const match = (spec.options ?? []).find((o) => normalize(o) === normalize(String(raw)));
    return match ?? extractEnum(String(raw), spec.options ?? []);
  }
  return extractValue(spec, String(raw), today);
}

function ymd(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
