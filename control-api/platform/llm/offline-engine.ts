import type { AgentEngine, IntentSpec, TurnRequest, TurnResult, VariableValue } from './agent-engine.js';
import { dateWords, extractBoolean, extractValue, normalize, tokens } from './extract.js';
import { answerFromPassages } from './knowledge-answer.js';

/**
 * The engine that needs no API key: keyword/example intent matching and typed value extraction,
 * speaking the block's templated replies. Deterministic, so scripted simulations are exact.
 * What it cannot do (paraphrase, reasoning, open questions) is listed in docs/recipes.md.
 */
const stopWords = new Set([
  'the', 'and', 'for', 'with', 'that', 'this', 'from', 'caller', 'user', 'customer', 'wants', 'want', 'says',
  'said', 'about', 'when', 'they', 'their', 'them', 'will', 'would', 'have', 'has', 'are', 'was', 'you', 'your',
  'our', 'can', 'could', 'any', 'some', 'into', 'its', 'intent', 'asks', 'ask',
]);
const affirmative = ['yes', 'confirm', 'agree', 'accept', 'affirm', 'ok', 'okay'];
const negative = ['no', 'deny', 'decline', 'refuse', 'reject', 'not', 'cancel'];
const fallbackReprompt = 'Sorry, I did not catch that. Could you say it again?';

export class OfflineEngine implements AgentEngine {
  readonly name = 'offline';

  async turn(request: TurnRequest): Promise<TurnResult> {
    const replies = request.replies ?? {};
    if (request.userText === undefined) return emit(request, replies.opening ?? '', undefined, {});
    const text = request.userText;
    const values: Record<string, VariableValue> = {};
    const today = request.today ?? new Date().toISOString().slice(0, 10);
    for (const spec of request.variables) {
      // Free text would swallow every utterance, so it is only captured when it is the sole ask.
      if (spec.kind === 'text' && request.variables.length > 1) continue;
      const value = extractValue(spec, text, today);
      if (value !== undefined) values[spec.name] = value;
    }
    const intent = intentOf(request.intents, text, values);
    if (intent) return emit(request, replies.intents?.[intent] ?? '', intent, values);
    const capturedAll = request.variables.length > 0 && request.variables.every((v) => v.name in values);
    if (capturedAll) return emit(request, '', undefined, values);
    // AnswerFlow: the relevant sentences of the best passage, or the reprompt when none fits.
    const answer = request.knowledge ? answerFromPassages(text, request.knowledge) : undefined;
    if (answer) return emit(request, answer, undefined, values);
    return emit(request, replies.reprompt ?? fallbackReprompt, undefined, values);
  }
}

function emit(request: TurnRequest, reply: string, intent: string | undefined, values: Record<string, VariableValue>): TurnResult {
  if (reply) request.onDelta?.(reply);
  return intent ? { reply, intent, values } : { reply, values };
}

/** Best-scoring intent, or undefined when nothing in the utterance points at one. */
export function matchIntent(intents: readonly IntentSpec[], text: string): string | undefined {
  return intentMatch(intents, text)?.name;
}

/**
 * What in the words points at an intent: one of its examples (or its name) said, a yes/no that its
 * description calls for, or keywords it shares with them.
 */
export type IntentEvidence = 'example' | 'polarity' | 'keywords';

/** The best-scoring intent and what in the words points at it. */
export function intentMatch(intents: readonly IntentSpec[], text: string): { readonly name: string; readonly by: IntentEvidence; readonly score: number } | undefined {
  const said = meaningTokens(text);
  const saidText = ` ${normalize(text)} `;
  const polarity = extractBoolean(text);
  let best: { name: string; score: number; by: IntentEvidence } | undefined;
  for (const intent of intents) {
    let score = 0;
    let by: IntentEvidence = 'keywords';
    for (const needle of examplesSaid(intent, saidText)) if (4 + needle.length / 100 > score) [score, by] = [4 + needle.length / 100, 'example'];
    const label = intentLabel(intent);
    const polar = (polarity === true && label.some((w) => affirmative.includes(w))) || (polarity === false && label.some((w) => negative.includes(w)));
    if (polar && score < 3) [score, by] = [3, 'polarity'];
    const keywords = intentKeywords(intent, label);
    let overlap = 0;
    for (const keyword of keywords) if (said.some((w) => isKeyword(w) && sameStem(w, keyword))) overlap++;
    if (overlap > score) [score, by] = [overlap, 'keywords'];
    if (score >= 1 && (!best || score > best.score)) best = { name: intent.name, score, by };
  }
  return best ? { name: best.name, by: best.by, score: best.score } : undefined;
}

/** The intent's examples (normalised) that `saidText` (normalised, a space either side) says whole. */
function examplesSaid(intent: IntentSpec, saidText: string): string[] {
  return (intent.examples ?? []).map(normalize).filter((e) => e && saidText.includes(` ${e} `));
}

/** Words in the longest of the intent's examples the text says whole ("i can make it and": 4). */
export function longestExampleSaid(intent: IntentSpec, text: string): number {
  return Math.max(0, ...examplesSaid(intent, ` ${normalize(text)} `).map((e) => e.split(' ').length));
}

/** How many different words that could name something the text says ("confirm will confirm": one). */
export function distinctKeywords(text: string): number {
  return new Set(meaningTokens(text).filter(isKeyword)).size;
}

/** How many of the intent's own words (its name, description and examples) the text says. */
export function intentWordsSaid(intent: IntentSpec, text: string): number {
  const said = meaningTokens(text).filter(isKeyword);
  const keywords = [...intentKeywords(intent, intentLabel(intent))];
  return said.filter((w) => keywords.some((k) => sameStem(w, k))).length;
}

/** The words of an intent's name ("promise_to_pay", "payNow") and description. */
function intentLabel(intent: IntentSpec): string[] {
  return meaningTokens(`${intent.name.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/_/g, ' ')} ${intent.description}`);
}

/** The intent's own words: its label's and its examples' keywords. */
function intentKeywords(intent: IntentSpec, label: readonly string[]): Set<string> {
  return new Set([...label, ...(intent.examples ?? []).flatMap((e) => meaningTokens(e))].filter(isKeyword));
}

/**
 * Words that turn what follows them around ("no" is left out: "no, please cancel it" is a no and
 * a cancel). Without their apostrophe too: recognisers and typists drop it ("dont", "cant").
 */
const negators = new Set(
  "not never cannot can't cant don't dont won't wont didn't didnt doesn't doesnt isn't isnt wasn't wasnt aren't arent haven't havent wouldn't wouldnt couldn't couldnt shouldn't shouldnt".split(' '),
);

/** Words that start a new thought, ending a negation's reach ("I can't come, so please cancel it"). */
const clauseStarts = new Set(['but', 'so', 'and', 'or', 'please', 'just', 'instead']);

/**
 * Tokens as they bear on what is wanted: each word after a negation, up to the next clause, is
 * marked ("i cannot come" -> i, cannot, not:come), in the intents' examples and descriptions and
 * in what the caller said alike. Unmarked, cancel's "I cannot come" made "come" a keyword of a
 * cancel: "can can it can do come thank well", heard for "I have to reschedule, something came
 * up", was one. The negation itself stays the word it is, so one intent's "never mind" is no
 * keyword of every sentence with a "not" in it.
 */
function meaningTokens(text: string): string[] {
  let negated = false;
  return tokens(text).map((w) => {
    if (negators.has(w)) {
      negated = true;
      return w;
    }
    if (clauseStarts.has(w)) negated = false;
    return negated ? `not:${w}` : w;
  });
}

/**
 * The intent of a turn: one whose example, name or yes/no was said; else, or over a mere shared
 * keyword ("I can pay three thousand on the fifth" shares "pay" with "pay now"), the one whose
 * captured values the turn stated.
 */
export function intentOf(intents: readonly IntentSpec[], text: string, values: Readonly<Record<string, VariableValue>>): string | undefined {
  const match = intentMatch(intents, text);
  const stated = intentOfValues(intents, values);
  return stated && (!match || match.by === 'keywords') ? stated : match?.name;
}

/**
 * The intent whose captured variables the turn stated, all of them ("three thousand on the fifth
 * of December" is a promise to pay though no promise words were said); the one capturing most
 * wins, ties go to the earlier intent.
 */
export function intentOfValues(intents: readonly IntentSpec[], values: Readonly<Record<string, VariableValue>>): string | undefined {
  let best: IntentSpec | undefined;
  for (const intent of intents) {
    const captures = intent.captures ?? [];
    if (captures.length === 0 || !captures.every((name) => name in values)) continue;
    if (!best || captures.length > (best.captures?.length ?? 0)) best = intent;
  }
  return best?.name;
}

/**
 * Words of a value (a day, a month, a number), not of what the caller wants: "monday" from the
 * example "reschedule to next monday" is no reschedule said ("haan ji" misheard as "monday" was
 * taken for one); "next" and "week" stay, "next week" says what is wanted.
 */
const valueWords = new Set(dateWords.filter((w) => w !== 'next' && w !== 'week'));

function isKeyword(token: string): boolean {
  const word = token.startsWith('not:') ? token.slice(4) : token;
  return word.length >= 3 && !stopWords.has(word) && !/^\d+$/.test(word) && !valueWords.has(word);
}

function sameStem(a: string, b: string): boolean {
  // A negated word matches only a negated word, by the word itself ("not:pay" is no "not:payday").
  if (a.startsWith('not:') !== b.startsWith('not:')) return false;
  if (a.startsWith('not:')) return sameStem(a.slice(4), b.slice(4));
  const [short, long] = a.length <= b.length ? [a, b] : [b, a];
  return long.startsWith(short) && short.length >= Math.min(4, long.length);
}
