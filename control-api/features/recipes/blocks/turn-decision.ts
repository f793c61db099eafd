import type { TurnResult, VariableValue } from '../../../platform/llm/agent-engine.js';
import { extractBoolean, tokens } from '../../../platform/llm/extract.js';
import { distinctKeywords, intentMatch, intentOfValues, intentWordsSaid, longestExampleSaid } from '../../../platform/llm/offline-engine.js';
import type { Intent, SmartAiSettings } from '../../../model/recipes/recipe-schema.js';
import type { Heard } from '../../../../core/ports/conversation.js';
import { amountTouchesDate, dateDisagreesWithWords, dateFarAhead, decisionOf, digitsFromSpeech, isPlainAnswer, meaningDisagrees, offlineValues, polarOnly, rivalReading } from './hearing-doubt.js';

/**
 * What a caller turn decides, and whether the block may act on it at once.
 *
 * Every exit of a listening block changes something (the call goes elsewhere, values are written
 * on the record), and so does every value it captures; an intent marked `action: false` is
 * informational. A decision that changes something is acted on only on a confident reading of
 * the caller; otherwise the block checks its meaning first ("Just to check: ...?"). Turns that
 * decide nothing (a knowledge answer, a reprompt) are neutral and store nothing.
 */
export interface Decision {
  /** The intent the block leaves through; undefined: the block's own answer (an Ask's values). */
  readonly intent?: Intent;
  /** The values the exit stores: the intent's captures, or the Ask's variables. */
  readonly values: Readonly<Record<string, VariableValue>>;
  /** The values answer the block's question for them after a denied reading back (`Awaiting`). */
  readonly answersAwaited?: boolean;
  /** Values said in an earlier turn for the same intent (`Awaiting.known`): judged when they were said. */
  readonly carried?: readonly string[];
}

/**
 * Values the block asked for alone: after a "no" to their reading back (the intent still meant),
 * or what the intent still lacked (`known`: what the caller had already said for it).
 */
export interface Awaiting {
  readonly intent?: Intent;
  readonly names: readonly string[];
  readonly known?: Readonly<Record<string, VariableValue>>;
}

/** The values an exit through `intent` keeps: its captures, else every value the turn stated. */
function valuesFor(intent: Intent, values: Readonly<Record<string, VariableValue>>): Record<string, VariableValue> {
  const keep = intent.captures ?? Object.keys(values);
  return Object.fromEntries(Object.entries(values).filter(([name]) => keep.includes(name)));
}

/**
 * The decision of one turn: the engine's intent with the values it keeps; after a denied reading
 * back, the same intent when the turn gives the values asked for; an Ask's answer once every
 * variable is known (`kept`: confident values of its earlier turns).
 */
export function decide(
  result: TurnResult,
  settings: SmartAiSettings,
  isDone: ((names: ReadonlySet<string>) => boolean) | undefined,
  kept: ReadonlyMap<string, VariableValue>,
  awaiting: Awaiting | undefined,
): Decision | undefined {
  const answering = awaiting?.intent && awaiting.names.some((name) => name in result.values) && (!result.intent || result.intent === awaiting.intent.name);
  const intent = answering ? awaiting?.intent : settings.intents.find((i) => i.name === result.intent);
  if (intent) {
    const values = valuesFor(intent, result.values);
    const carried = answering ? Object.entries(awaiting?.known ?? {}).filter(([name]) => !(name in values)) : [];
    return {
      intent,
      values: { ...Object.fromEntries(carried), ...values },
      ...(answering ? { answersAwaited: true } : {}),
      ...(carried.length > 0 ? { carried: carried.map(([name]) => name) } : {}),
    };
  }
  if (!isDone) return undefined;
  const values = { ...Object.fromEntries(kept), ...result.values };
  return isDone(new Set(Object.keys(values))) ? { values } : undefined;
}

/**
 * What an intent that stores values still lacks when the caller said some of them ("I will pay on
 * Monday": the amount): the block asks for it before it acts, so a promise is never recorded
 * without its amount. An intent heard with none of its values, or whose other values the run
 * already holds, is left as the recipe made it.
 */
export function missingCaptures(decision: Decision, known: (name: string) => boolean): string[] {
  const intent = decision.intent;
  if (!intent || intent.action === false || !intent.captures) return [];
  const stated = intent.captures.filter((name) => name in decision.values);
  // A value the run already holds (a campaign's variable, an earlier block's) is no missing piece.
  return stated.length > 0 ? intent.captures.filter((name) => !(name in decision.values) && !known(name)) : [];
}

export type DoubtReason = 'lowConfidence' | 'rival' | 'unsupported' | 'polarOnly' | 'valuesRunTogether' | 'valuesConflict' | 'farDate' | 'digitsSpoken' | 'inferred' | 'repeatsDenied' | 'lonelyKeyword' | 'singleDigitAmount';

/** Readings of values the caller said no to when they were read back. */
export type DeniedReadings = readonly Readonly<Record<string, VariableValue>>[];

/**
 * The values say nothing the caller has not already denied: each is the value of one reading they
 * said no to ("sunday" again after "no" to Sunday; not 2000 on the 5th after "no" to 3000 on the 5th).
 */
function repeatsDenial(values: Readonly<Record<string, VariableValue>>, denied: DeniedReadings): boolean {
  const entries = Object.entries(values);
  return entries.length > 0 && denied.some((reading) => entries.every(([name, value]) => name in reading && JSON.stringify(reading[name]) === JSON.stringify(value)));
}

/**
 * After a "no" to a reading back, does the intent still stand (only the values are asked for
 * again)? Only when the caller's own words for it were heard, on a confident reading: an intent
 * inferred from values, reached through a bare yes/no or heard at a low confidence may itself be
 * what the "no" was about, so the block asks its question again instead ("haan ji" misheard as
 * "sunday", checked as a reschedule and denied, must not be answered with "Which day would suit you?").
 */
export function intentStands(heard: Heard, decision: Decision, settings: SmartAiSettings, doubt: DoubtReason): boolean {
  const intent = decision.intent;
  if (!intent || heard.kind !== 'utterance') return intent !== undefined;
  if (doubt === 'lowConfidence' || doubt === 'inferred' || doubt === 'polarOnly' || doubt === 'valuesConflict' || doubt === 'lonelyKeyword') return false;
  return heard.meaning === `intent:${intent.name}` || intentMatch(settings.intents, heard.text)?.name === intent.name;
}


/**
 * Why the block must not act on `decision` at once, if it must not: a confidence below
 * `confirmBelowConfidence`; a close competing reading that goes elsewhere or, for what changes
 * something, states other values; a meaning the grammar heard that does not support it; an
 * intent reached through a bare yes/no among other words; an intent's word or a value heard alone
 * over speech it does not explain; values heard with a hedge; an amount run into a date's day; a date
 * beside a weekday it is not or another day named; a date more than 60 days ahead; a digit string heard from speech; an intent inferred from values alone; a reading the caller denied when it was read back, heard again;
 * an intent's amount of one digit.
 * Keypad entries are never doubtful.
 */
export function doubtOf(heard: Heard, whole: Decision, settings: SmartAiSettings, today: string, denied: DeniedReadings = []): DoubtReason | undefined {
  if (heard.kind !== 'utterance') return undefined;
  // What this turn said is judged; values carried from an earlier turn were judged then.
  const decision = whole.carried ? { ...whole, values: Object.fromEntries(Object.entries(whole.values).filter(([name]) => !whole.carried?.includes(name))) } : whole;
  // What the caller just said no to, heard again: the same mishearing is the likelier story.
  if (repeatsDenial(decision.values, denied)) return 'repeatsDenied';
  if (heard.confidence !== undefined && heard.confidence < settings.confirmBelowConfidence) return 'lowConfidence';
  const acts = decision.intent?.action !== false;
  if (rivalReading(heard, settings, today, acts ? Object.keys(decision.values) : []) !== undefined) return 'rival';
  // An answer to the block's question for a value ("How much can you pay?") names no intent: the intent was said before.
  if (!(decision.answersAwaited && heard.meaning === '') && meaningDisagrees(heard, decisionOf({ ...(decision.intent ? { intent: decision.intent.name } : {}), values: decision.values }), settings, today)) return 'unsupported';
  // Values heard with a hedge ("I'm not sure, any day next week" heard "not sure am today that
  // we"): the grammar heard no answer, whatever value the rest of the speech was bent into.
  if (!decision.intent && Object.keys(decision.values).length > 0 && heard.meaning === 'unsure') return 'unsupported';
  if (polarOnly(heard, decision.intent)) return 'polarOnly';
  if (decision.intent && lonelyKeyword(heard, decision.intent, settings, decision.values, acts)) return 'lonelyKeyword';
  if (loneValueWord(heard, decision.values, settings)) return 'lonelyKeyword';
  // Values alone do not say what the caller wants done: an intent that changes something, taken
  // from its captured values with none of its words said ("monday" is no "reschedule"), is checked
  // (not when they answer "Which day would suit you?" asked for that intent).
  if (acts && decision.intent && !decision.answersAwaited && intentMatch(settings.intents, heard.text)?.name !== decision.intent.name && intentOfValues(settings.intents, decision.values) === decision.intent.name) return 'inferred';
  if (amountTouchesDate(heard, decision.values, settings)) return 'valuesRunTogether';
  // What was said contradicts itself: a weekday the stored date is not, two days named.
  if (dateDisagreesWithWords(heard, decision.values, settings, today)) return 'valuesConflict';
  // A date months away: more likely a misheard month than what the caller said.
  if (dateFarAhead(heard, decision.values, settings, today)) return 'farDate';
  // A spoken order or account number: read back digit by digit, whatever the confidence.
  if (digitsFromSpeech(heard, decision.values, settings)) return 'digitsSpoken';
  if (acts && decision.intent && singleDigitAmount(decision.intent, decision.values, settings)) return 'singleDigitAmount';
  return undefined;
}

/**
 * An amount the intent captures that is one digit ("I can pay the whole thing now" heard "i can
 * pay eight come the", a promise of 8): one number word is what a recogniser most easily puts in
 * where the audio fits it, and an amount is rarely said as one. Checked, never acted on; after a
 * "no" the intent stands and its values are asked for again. An Ask's own answer ("How many?" -
 * "two") is no intent's capture and is not checked for this.
 */
function singleDigitAmount(intent: Intent, values: Readonly<Record<string, VariableValue>>, settings: SmartAiSettings): boolean {
  return (intent.captures ?? []).some((name) => {
    const value = values[name];
    const type = settings.variables.find((v) => v.name === name)?.type;
    return type === 'number' && typeof value === 'number' && Number.isInteger(value) && value >= 0 && value < 10;
  });
}

/**
 * Before the engine runs: could this turn end in a confirmation? Then its reply must not be
 * streamed (it may be confirmed away): a low confidence, a close rival reading, a yes/no among
 * other words, or values an intent that changes something captures (it may be inferred from them).
 */
export function mayBeDoubted(heard: Heard, settings: SmartAiSettings, today: string): boolean {
  if (heard.kind !== 'utterance') return false;
  if (heard.confidence !== undefined && heard.confidence < settings.confirmBelowConfidence) return true;
  const storable = settings.variables.filter((v) => v.type !== 'text').map((v) => v.name);
  if (rivalReading(heard, settings, today, storable) !== undefined) return true;
  if (extractBoolean(heard.text) !== undefined && !isPlainAnswer(heard.text)) return true;
  const statedValues = offlineValues(heard.text, settings, today);
  if (dateFarAhead(heard, statedValues, settings, today) || digitsFromSpeech(heard, statedValues, settings)) return true;
  if (loneValueWord(heard, statedValues, settings) || dateDisagreesWithWords(heard, statedValues, settings, today)) return true;
  const stated = Object.keys(statedValues);
  return settings.intents.some((i) => i.action !== false && (i.captures ?? []).some((name) => stated.includes(name)));
}

/** The share of the speech one word must cover to be taken as the whole answer (bench/hearing-accuracy.ts: bare "bye"s are heard at 1.0). */
const LONE_WORD_CONFIDENCE = 0.8;

/**
 * A date or an amount stated by one word, once or again, that leaves much of the speech
 * unexplained: "How about the eleventh" came back "tomorrow" at 0.61 and stored tomorrow's date,
 * "Any day except Monday" "monday monday" at 0.62 and stored Monday. One word is where a grammar
 * recogniser fits a wrong value most easily. Read back, never stored at once. Only the offline
 * recogniser's confidence is the share of the speech its words cover (a reading with a grammar
 * meaning); a cloud recogniser's is judged by `confirmBelowConfidence` alone.
 */
function loneValueWord(heard: Extract<Heard, { kind: 'utterance' }>, values: Readonly<Record<string, VariableValue>>, settings: SmartAiSettings): boolean {
  if (heard.meaning === undefined || new Set(tokens(heard.text)).size !== 1) return false;
  const stated = settings.variables.some((v) => (v.type === 'date' || v.type === 'number') && v.name in values);
  return stated && (heard.confidence ?? 1) < LONE_WORD_CONFIDENCE;
}

/**
 * An intent named by one of its words alone: the recogniser, listening for the block's words,
 * puts one in wherever the audio fits it. Among words that name nothing, for an intent that
 * changes something (`acts`): "Play some music" came out "come human" at 0.65 and took the
 * transfer. As the whole reading, over much speech it leaves unexplained, for any exit,
 * informational ones too (a wrong branch is wrong whatever it changes): "Where is my refund"
 * heard "goodbye" at 0.61 ended a call with its question unanswered; a bare "bye" is heard at 1.0.
 */
function lonelyKeyword(heard: Extract<Heard, { kind: 'utterance' }>, intent: Intent, settings: SmartAiSettings, values: Readonly<Record<string, VariableValue>>, acts: boolean): boolean {
  // Only a grammar recogniser (likelihoods per 10 ms) fills the block's words in where audio fits them.
  if (!heard.alternatives?.some((a) => a.scoreGap !== undefined)) return false;
  if (heard.meaning === 'yes' || heard.meaning === 'no') return false;
  const match = intentMatch(settings.intents, heard.text);
  if (match?.name !== intent.name || match.by === 'polarity') return false;
  if (heard.text.trim().split(/\s+/).length < 2) return (heard.confidence ?? 1) < LONE_WORD_CONFIDENCE;
  // One word among words that mean nothing is heard alone too: "Is it possible to postpone" came
  // back "confirm will confirm" at 0.79 and took the confirm exit ("i can make it and" says an
  // example of several words: more than one word heard).
  if (!acts && distinctKeywords(heard.text) < 2 && longestExampleSaid(intent, heard.text) < 2) return (heard.confidence ?? 1) < LONE_WORD_CONFIDENCE;
  if (!acts || intentWordsSaid(intent, heard.text) >= 2) return false;
  // The other words state what the intent captures ("reschedule to tomorrow"): they name something.
  return !(intent.captures ?? []).some((name) => name in values);
}
