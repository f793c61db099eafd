import type { TurnResult } from '../../../platform/llm/agent-engine.js';
import { addDays, extractBoolean, extractValue, holdsAnswer, months, normalize, numberWords, relativeDays, tokens, weekdays } from '../../../platform/llm/extract.js';
import { intentMatch, intentOf, intentOfValues, matchIntent } from '../../../platform/llm/offline-engine.js';
import type { Intent, SmartAiSettings } from '../../../model/recipes/recipe-schema.js';
import type { Alternative, Heard } from '../../../../core/ports/conversation.js';
import { unsurePhrases, variableSpec } from './listen-expectation.js';

/** A competing reading this close to the best one makes the hearing doubtful: in confidence (cloud recognisers)... */
const RIVAL_MARGIN = 0.25;
/**
 * ...or in likelihood per 10 ms (the offline recogniser): measured on flite answers, readings a
 * caller could not be told apart from ("no" / "nope") come within 1, a different answer that
 * merely fits the words ("pay now" / "pay later") 4 to 8 behind.
 */
const RIVAL_SCORE_GAP = 2;
/**
 * How far behind a reading that means nothing may be and still make a meaning doubtful: further
 * than a rival meaning (2), since against no answer at all a meaning needs a clear lead, not just
 * any. At 2, "Is there parking at the clinic?" read "okay yeah" (a yes, "can" 3.9 behind) and "Let
 * me ask my wife first" read "yep my like" ("it we like" 4.6 behind) confirmed appointments
 * (development splits dev-e, dev-f; bench/hearing-accuracy.ts). At 5 the tuning split's answers
 * are all still acted on at once; further (7, 10) the development splits lose more of theirs to a
 * question than they gain.
 */
const MEANINGLESS_SCORE_GAP = 5;
/**
 * A "no" with a hedge ("I don't know") close behind is confirmed from further away: the two share
 * their sounds (slt's "I don't know" came out "no nope" 3.9 to 4.7 ahead of the hedge under two of
 * three noise realisations, bench/hearing-accuracy.ts), and acting on a no that was a hedge
 * cancels what the caller never cancelled.
 */
const HEDGE_SCORE_GAP = 6;

/** What a turn decided, as a comparable key: its intent, else the values it captured; undefined: nothing. */
export function decisionOf(result: Pick<TurnResult, 'intent' | 'values'>): string | undefined {
  if (result.intent) return `intent:${result.intent}`;
  const values = Object.entries(result.values).sort(([a], [b]) => a.localeCompare(b));
  return values.length > 0 ? `values:${JSON.stringify(values)}` : undefined;
}

/** The values a text states, the offline way (free text aside: it would be any words). */
export function offlineValues(text: string, settings: SmartAiSettings, today: string): Record<string, string | number | boolean> {
  const values: Record<string, string | number | boolean> = {};
  for (const variable of settings.variables) {
    if (variable.type === 'text') continue;
    const value = extractValue(variableSpec(variable), text, today);
    if (value !== undefined) values[variable.name] = value;
  }
  return values;
}

/** The offline reading of a text: the intent its phrases (or all its captured values) name, else the values it states. */
function offlineDecision(text: string, settings: SmartAiSettings, today: string): string | undefined {
  const values = offlineValues(text, settings, today);
  const intent = intentOf(settings.intents, text, values);
  if (intent) return `intent:${intent}`;
  return decisionOf({ values });
}

/** The values among `names` two readings state, compared: a date or amount that flips is no value to store. */
function sameValues(a: Readonly<Record<string, unknown>>, b: Readonly<Record<string, unknown>>, names: readonly string[]): boolean {
  return names.every((name) => a[name] === b[name]);
}

/**
 * The n-best check: a competing reading of the same audio, nearly as confident, that would take
 * the block somewhere else ("yes I can make it" / "yes I can't make it"). Both readings are read
 * the same offline way, whatever engine runs the block, so the check is about hearing, not about
 * the engine's judgement. `stored` names the values the decision would store: a close reading
 * that states other values for them (or none) is a rival too, beside an intent as well ("i'm
 * tomorrow that another day" stored a date nobody said).
 */
export function rivalReading(heard: Heard, settings: SmartAiSettings, today: string, stored: readonly string[] = []): string | undefined {
  if (heard.kind !== 'utterance' || !heard.alternatives?.length) return undefined;
  const best = offlineDecision(heard.text, settings, today);
  const bestValues = offlineValues(heard.text, settings, today);
  const polar = heard.meaning === 'yes' || heard.meaning === 'no';
  for (const alternative of heard.alternatives) {
    if (heard.meaning === 'no' && (alternative.scoreGap ?? Infinity) < HEDGE_SCORE_GAP && isHedge(alternative.text)) return alternative.text;
    // The grammar's reading without the winning phrases, meaning nothing and not far behind: the
    // phrases explain the audio barely better than no answer at all (awb's "Who won the cricket
    // match?" was "do want goodbye it it that", a confident goodbye 1.5 per 10 ms ahead of "do
    // want it it that"; slt's "What is the meaning of life?" a yes 0.5 ahead of "and the my").
    // The same for values: the same audio read with no date or amount at all (under the other
    // noise realisation) leaves "that there eight of december" no date to act on.
    const other = offlineDecision(alternative.text, settings, today);
    const meaningless = !other && extractBoolean(alternative.text) === undefined;
    if (meaningless && (best !== undefined || polar) && (alternative.scoreGap ?? Infinity) < MEANINGLESS_SCORE_GAP) return alternative.text;
    if (!isClose(heard, alternative)) continue;
    // The same audio read with the opposite answer in it, which the best reading does not hold:
    // "yep please can nope", likelier than "yep please can" (a yes) for "No, please cancel".
    // Whichever word the extractor would take first, a yes and a no were both heard.
    if (polar && holdsAnswer(alternative.text, heard.meaning === 'no') && !holdsAnswer(heard.text, heard.meaning === 'no')) return alternative.text;
    // Another intent competes; values heard in the noise ("sunday eleven") compete with an intent
    // only when they are values the decision would store.
    if (other && other !== best && (other.startsWith('intent:') || !best?.startsWith('intent:'))) return alternative.text;
    // The same intent, but reached only in a way the block would not act on at once: through a
    // yes/no among other words, or from values alone. The audio then barely tells the intent's own
    // words from none ("fifteen may cancel there am no we", 0.8 ahead of "fifteen may tenth may
    // there am no we", was "could we make it later in the week"; "i will pay two come and on
    // friday", 0.7 ahead of "we okay two come and on friday", was two thousand).
    if (other === best && other?.startsWith('intent:') && weakerRoute(heard.text, alternative.text, other, settings)) return alternative.text;
    if (stored.length > 0 && !sameValues(bestValues, offlineValues(alternative.text, settings, today), stored)) return alternative.text;
  }
  return undefined;
}

/**
 * An intent that changes something, reached only through a yes/no among other words: "nope can
 * we to it that we am" is no "cancel" (the caller went on to say something the block did not
 * understand: "no, can we do it next week instead"). A no that goes on is a no to the question
 * and the lead-in of something else; a yes that goes on only when the rest turns against it
 * ("yes, but not on Monday"), otherwise it is framed ("yes, I will come"). A plain yes/no ("no",
 * "no thanks") is an answer; an example of the intent said ("no, please cancel it") is the
 * intent. Informational intents (`action: false`) are exempt.
 */
export function polarOnly(heard: Heard, intent: Intent | undefined): boolean {
  if (heard.kind !== 'utterance' || !intent || intent.action === false || isPlainAnswer(heard.text)) return false;
  const polarity = extractBoolean(heard.text);
  if (polarity === undefined) return false;
  // An example that is itself a bare yes/no ("no" for cancel) is the yes/no, not the intent said.
  const said = { ...intent, examples: intent.examples.filter((e) => !isPlainAnswer(e)) };
  if (intentMatch([said], heard.text)?.by === 'example') return false;
  // Without its yes/no words, does anything the caller said still point at the intent ("yes I confirm")?
  const rest = heard.text.toLowerCase().split(/[^a-z']+/).filter((w) => w && !polarWords.has(w));
  if (intentMatch([said], rest.join(' ')) !== undefined) return false;
  return polarity === false || rest.some((w) => turnsAgainst.has(w));
}

/**
 * Does `rival` reach the intent `decision` names only through a bare yes/no among other words or
 * from its values alone, where `best` says the intent in its own words?
 */
function weakerRoute(best: string, rival: string, decision: string, settings: SmartAiSettings): boolean {
  const intent = settings.intents.find((i) => `intent:${i.name}` === decision);
  if (!intent || intent.action === false) return false;
  const said = (text: string): boolean => intentMatch(settings.intents, text)?.name === intent.name && !polarOnly({ kind: 'utterance', text }, intent);
  return said(best) && !said(rival);
}

/** Words after a yes that take it back or ask for something else. */
const turnsAgainst = new Set(['but', 'instead', 'however', 'actually', 'rather', 'except', 'unless', 'another', 'other', 'different', 'not', "can't", 'cannot', "don't", "won't", 'change', 'move']);

const polarWords = new Set(['yes', 'yeah', 'yep', 'please', 'sure', 'okay', 'ok', 'no', 'nope', 'thanks', 'thank', 'you', 'not', 'really', 'haan', 'ji', 'nahi', 'nahin']);

/** Only yes/no words (and "please", "thanks"): an answer to a yes/no question, not a new statement. */
export function isPlainAnswer(text: string): boolean {
  const words = text.toLowerCase().split(/[^a-z']+/).filter(Boolean);
  return words.length > 0 && words.every((w) => polarWords.has(w));
}

/** A competing reading nearly as likely as the best one (offline: in score per 10 ms; cloud: in confidence). */
function isClose(heard: Extract<Heard, { kind: 'utterance' }>, alternative: Alternative, gap = RIVAL_SCORE_GAP, margin = RIVAL_MARGIN): boolean {
  return alternative.scoreGap !== undefined ? alternative.scoreGap < gap : alternative.confidence >= (heard.confidence ?? 1) - margin;
}

/**
 * How far behind a competing reading may be to be offered when the best one decides nothing.
 * Offering is a question ("Just to check: Saturday 5 December?"), never an action, so it reaches
 * further than a doubt: slt's "no, the fifth of December" said over a closing line came out
 * "nope that am", the date reading 3.7 behind.
 */
const OFFER_SCORE_GAP = 6;
const OFFER_MARGIN = 0.4;

/**
 * The competing readings of a turn worth offering, best first, as turns of their own: when the
 * best reading decides nothing, one of these may be what the caller said ("no, the fifth of
 * December" read "nope that am"). Such a reading is never acted on at once: its meaning is
 * checked with the caller.
 */
export function closeReadings(heard: Heard): Extract<Heard, { kind: 'utterance' }>[] {
  if (heard.kind !== 'utterance') return [];
  const seen = new Set([heard.text]);
  const out: Extract<Heard, { kind: 'utterance' }>[] = [];
  for (const alternative of heard.alternatives ?? []) {
    if (!isClose(heard, alternative, OFFER_SCORE_GAP, OFFER_MARGIN) || seen.has(alternative.text) || !alternative.text.trim()) continue;
    seen.add(alternative.text);
    // Read as the grammar read it (`meaning` '' : nothing expected said), so the in-pieces checks apply.
    out.push({ kind: 'utterance', text: alternative.text, confidence: alternative.confidence, ...(heard.meaning !== undefined ? { meaning: '' } : {}) });
  }
  return out;
}

function isHedge(text: string): boolean {
  const said = ` ${normalize(text)} `;
  return unsurePhrases.some((p) => said.includes(` ${normalize(p)} `));
}

/**
 * A grammar-constrained recogniser says which expected phrases it heard (`meaning`). A decision
 * that those phrases do not support is doubtful: the engine took an intent from a stray word
 * ("today" read as "pay today") or from a bare yes/no that does not lead to that intent.
 */
export function meaningDisagrees(heard: Heard, decision: string | undefined, settings: SmartAiSettings, today: string): boolean {
  if (heard.kind !== 'utterance' || heard.meaning === undefined || !decision?.startsWith('intent:')) return false;
  if (heard.meaning === decision) return false;
  // No phrase heard, only values: the intent those values make up ("three thousand on the fifth of December").
  if (heard.meaning === '' && `intent:${intentOfValues(settings.intents, offlineValues(heard.text, settings, today)) ?? ''}` === decision) return false;
  if (heard.meaning === 'yes' || heard.meaning === 'no') return `intent:${matchIntent(settings.intents, heard.meaning) ?? ''}` !== decision;
  return true;
}

/**
 * An amount (or a digit string) a grammar heard in pieces. A phone line loses the hiss of
 * "thousand", and the recogniser then strings what is left into several small numbers ("three
 * thousand on five December" came back "three am one fifth december": an amount of 3, said too
 * low and asked again). One amount is one run of number words; another run that is not the day of a date means
 * the amount cannot be trusted. Only for hearings of a grammar recogniser (`meaning` set): open
 * recognisers and typed text write amounts as digits.
 */
export function amountInPieces(heard: Heard, values: TurnResult['values'], settings: SmartAiSettings): boolean {
  if (heard.kind !== 'utterance' || heard.meaning === undefined) return false;
  const amounts = settings.variables.filter((v) => v.type === 'number' && typeof values[v.name] === 'number').length;
  if (amounts > 0 && (numberRuns(heard.text) > amounts || strayAnd(heard.text))) return true;
  // The same for a digit string: "one two three four five six" heard "want three four five to
  // five" ("one" and "two" taken for "want" and "to") is no order number 345 with a stray 5.
  const digitStrings = settings.variables.filter((v) => v.type === 'digits' && values[v.name] !== undefined).length;
  return digitStrings > 0 && digitRuns(heard.text) > digitStrings;
}

const digitWords = new Set(['zero', 'oh', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'double', 'triple']);

/**
 * A digit string heard from speech (any recogniser; typed text carries no confidence): one lost or
 * misheard digit makes another order or account, and a phone line loses digits often ("six" heard
 * "it", "one" heard "want": 1 of 45 spoken 6-digit numbers of the hearing bench's dev split heard
 * whole). So it is read back digit by digit before it is stored, as an IVR does; keyed digits are not.
 * This covers a digit string beside a word that sounds like a digit ("want three four five five"),
 * which had a rule of its own before.
 */
export function digitsFromSpeech(heard: Heard, values: TurnResult['values'], settings: SmartAiSettings): boolean {
  if (heard.kind !== 'utterance' || heard.confidence === undefined) return false;
  return settings.variables.some((v) => v.type === 'digits' && values[v.name] !== undefined);
}

/** Runs of digits and digit words in a text ("one two three" is one run, "one two to three" two). */
function digitRuns(text: string): number {
  let runs = 0;
  let inRun = false;
  for (const w of tokens(text)) {
    const digit = digitWords.has(w) || /^\d+$/.test(w);
    if (digit && !inRun) runs++;
    inRun = digit;
  }
  return runs;
}

/**
 * An amount and a date a grammar heard with nothing between them ("two thousand nine fifth of
 * december" for "two thousand on the fifth of December", "one thousand five monday" for "one
 * thousand by Monday"): where the amount ends and the date begins cannot be told (2009 on the 5th,
 * or 2000 on the 9th?), so the values are read back before they are stored. Only for hearings of a grammar recogniser, like `amountInPieces`.
 */
export function amountTouchesDate(heard: Heard, values: TurnResult['values'], settings: SmartAiSettings): boolean {
  if (heard.kind !== 'utterance' || heard.meaning === undefined) return false;
  const stated = (type: string): boolean => settings.variables.some((v) => v.type === type && values[v.name] !== undefined);
  if (!stated('number') || !stated('date')) return false;
  const words = tokens(heard.text);
  return words.some((w, i) => {
    // A number word right before a weekday: a "by" or "on" taken for one ("one thousand five
    // monday" for "one thousand by Monday", an amount of 1005).
    if (weekdays.includes(w)) return words[i - 1] !== undefined && words[i - 1] !== 'and' && isNumberToken(words[i - 1]!);
    if (!months.includes(w)) return false;
    const day = words[i - 1] === 'of' ? i - 2 : i - 1;
    if (!isDayWord(words[day]) && !isOrdinal(words[day])) return false;
    const first = words[day - 1] === 'twenty' || words[day - 1] === 'thirty' ? day - 1 : day;
    const before = words[first - 1];
    return before !== undefined && before !== 'and' && isNumberToken(before);
  });
}

const isOrdinal = (w: string | undefined): boolean => w !== undefined && /^(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|\w+teenth|\w+tieth|\d+(st|nd|rd|th))$/.test(w);

/**
 * An "and" with a number on one side only: in an amount "and" joins two parts ("two thousand and
 * fifty"); alone beside one it is what a phone line left of a lost "thousand" or "hundred" ("two
 * thousand on Friday" heard "twelve and on friday", "come and eighty"), so the amount is not all there.
 */
function strayAnd(text: string): boolean {
  const words = tokens(text);
  const numeric = (w: string | undefined): boolean => w !== undefined && w !== 'and' && isNumberToken(w);
  return words.some((w, i) => w === 'and' && numeric(words[i - 1]) !== numeric(words[i + 1]));
}

/**
 * A date stored beside words that name another day: "september fifteenth monday" (the 15th of
 * September is no Monday) has a month or a day misheard, and "saturday tomorrow" or "today
 * tomorrow" (both heard for "Saturday, if you are open") names two days, of which the extractor
 * takes one, as does a month beside a relative day ("thirty august tomorrow" for "The day after
 * tomorrow" stored tomorrow). Either way the date is read back first. A weekday or a relative day
 * alone makes the date and cannot disagree with it; "tomorrow, Wednesday" on a Tuesday agrees.
 */
export function dateDisagreesWithWords(heard: Heard, values: TurnResult['values'], settings: SmartAiSettings, today: string): boolean {
  if (heard.kind !== 'utterance') return false;
  const words = tokens(heard.text);
  const named = weekdays.filter((d) => words.includes(d));
  const relative = relativeDays(heard.text);
  const namedMonths = months.filter((m) => words.includes(m));
  if (named.length + relative.length + (namedMonths.length > 0 ? 1 : 0) < 2 || named.length + relative.length === 0) return false;
  return settings.variables.some((v) => {
    const value = values[v.name];
    if (v.type !== 'date' || typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
    const weekday = weekdays[new Date(`${value}T12:00:00Z`).getUTCDay()]!;
    const month = months[Number(value.slice(5, 7)) - 1]!;
    return named.some((d) => d !== weekday) || relative.some((days) => addDays(today, days) !== value) || (namedMonths.length > 0 && !namedMonths.includes(month));
  });
}

/** Runs of number words in a text, leaving out the day beside a month name ("five december"). */
function numberRuns(text: string): number {
  const words = tokens(text);
  const day = new Set<number>();
  const tens = (at: number): boolean => words[at] === 'twenty' || words[at] === 'thirty';
  words.forEach((w, i) => {
    if (!months.includes(w)) return;
    // As extractDate reads it: the word nearest the month, with a "twenty"/"thirty" before it.
    const before = words[i - 1] === 'of' ? i - 2 : i - 1;
    if (isDayWord(words[before])) day.add(before);
    if (tens(before - 1)) day.add(before - 1);
    if (isDayWord(words[i + 1])) day.add(i + 1);
    if (tens(i + 1) && isDayWord(words[i + 2])) day.add(i + 2);
  });
  let runs = 0;
  let inRun = false;
  words.forEach((w, i) => {
    const numeric = !day.has(i) && isNumberToken(w) && !(w === 'and' && !inRun);
    if (numeric && !inRun) runs++;
    inRun = numeric;
  });
  return runs;
}

/** A number word ("and" included: it joins an amount's parts) or a token of digits. */
const isNumberToken = (w: string): boolean => numberWords.includes(w) || /^\d/.test(w);

const scaleWords = new Set(['hundred', 'thousand', 'lakh', 'lakhs', 'million', 'crore', 'and', 'point']);
const isDayWord = (w: string | undefined): boolean => w !== undefined && (/^\d{1,2}$/.test(w) || (numberWords.includes(w) && !scaleWords.has(w)));

/** Days ahead beyond which a stored date is read back first. */
const FAR_DATE_DAYS = 60;

/**
 * A date further ahead than callers move a visit or a payment: a phone line loses a month name
 * more easily than the rest ("the tenth of December" heard "the tenth august", "Thursday please"
 * heard "first june"), and a misheard month lands months away, so a date more than 60 days ahead
 * is read back before it is stored. For any recogniser: cloud ones mishear months too.
 */
export function dateFarAhead(heard: Heard, values: TurnResult['values'], settings: SmartAiSettings, today: string): boolean {
  if (heard.kind !== 'utterance') return false;
  const from = Date.parse(`${today}T00:00:00Z`);
  return settings.variables.some((v) => {
    const value = values[v.name];
    if (v.type !== 'date' || typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
    return (Date.parse(`${value}T00:00:00Z`) - from) / 86_400_000 > FAR_DATE_DAYS;
  });
}
