import type { PhraseGroup, SpokenValue } from '../../core/ports/conversation.js';

/**
 * Grammar-constrained recognition for the offline engine, with a confidence it can stand behind.
 *
 * A grammar that only knows the expected words forces every sound onto one of them: "I am
 * driving right now" comes out as "... sure ..." or "... no". So the grammar also offers a
 * *filler* for each phone (a pseudo-word pronounced as that single phone, the garbage model of
 * keyword spotting): speech that matches no expected phrase is absorbed by fillers instead of
 * being bent into an answer. Values (dates, amounts, digits) are small structured grammars, not
 * bags of words, for the same reason: a bag of number words absorbs anything. The confidence is
 * the share of the speech that one meaning covers (its phrases, plus yes/no and values); speech
 * split between two meanings ("human ... goodbye") or mostly fillers is doubtful.
 */

/** The CMU phone set of Debian's en-us model. */
const phones = 'AA AE AH AO AW AY B CH D DH EH ER EY F G HH IH IY JH K L M N NG OW OY P R S SH T TH UH UW V W Y Z ZH'.split(' ');
export const fillerPrefix = 'ph_';

/**
 * Words Indian callers use (amounts, "no") that the CMU dictionary lacks, and "yes" as it arrives
 * over G.711: the /s/ lives mostly above 4 kHz, so the wideband model hears the band-limited
 * hiss as /hh/ (a bare "Yes" was heard by one of four flite voices; with this pronunciation by
 * three, bench/hearing-accuracy.ts). The yes it adds in noise is caught by the rival check.
 * "six" and "seven" lose their /s/ the same way: where a digit string was expected, "six" came
 * back as fillers or "it" and "seven" as "am"; with these the order numbers of the hearing
 * bench's tuning split read back as said went from 5 to 10 of 16.
 */
const extraWords = ['yes(2) Y EH HH', 'six(2) HH IH K HH', 'seven(2) HH EH V AH N', 'lakh L AA K', 'lakhs L AA K S', 'crore K R AO R', 'nahi N AH HH IY', 'nahin N AH HH IY N'];

/** Dictionary lines for the filler pseudo-words and the extra words (appended to the model's dictionary). */
export function fillerDictionary(): string {
  return [...phones.map((p) => `${fillerPrefix}${p.toLowerCase()} ${p}`), ...extraWords].join('\n') + '\n';
}

/**
 * Prior of a carrier word against an expected word (JSGF weight; expected words have 1). Carriers
 * are short function words that fit any fragment of speech: at the same prior, "the third of
 * december" was read "that there eight of december" and a question "thank can i'll am i'm". 0.01
 * was measured on bench/hearing-accuracy.ts (116 cases): right 94 -> 96, wrong 0 -> 0 (0.1: 95);
 * wider beams (1e-80) changed no verdict, so the misreading was the prior, not the search.
 */
const CARRIER_WEIGHT = 0.01;

/** Seconds: longer than any one phone is spoken. */
const LONG_PHONE_S = 0.25;

/** Hiss-like phones the decoder gives the line noise before and after speech; not speech. */
const edgeNoise = new Set(['f', 'hh', 's', 'sh', 'th', 'z', 'v', 'dh', 'zh'].map((p) => fillerPrefix + p));

const months = 'january february march april may june july august september october november december';
const weekdays = 'monday tuesday wednesday thursday friday saturday sunday';
/** JSGF rules for spoken values (English). */
const valueRules = `
<d1> = one | two | three | four | five | six | seven | eight | nine;
<teen> = ten | eleven | twelve | thirteen | fourteen | fifteen | sixteen | seventeen | eighteen | nineteen;
<ty> = twenty | thirty | forty | fifty | sixty | seventy | eighty | ninety;
<n99> = <d1> | <teen> | <ty> [<d1>];
<n999> = <n99> | [<d1>] hundred [[and] <n99>] | <teen> hundred [[and] <n99>];
<number> = zero | <n999> [thousand [[and] <n999>]] | <n99> (lakh | lakhs) [[and] <n999> [thousand [[and] <n999>]]] | <n99> crore | <n999> point (<d1> | zero)+;
<o1> = first | second | third | fourth | fifth | sixth | seventh | eighth | ninth;
<ordinal> = <o1> | tenth | eleventh | twelfth | thirteenth | fourteenth | fifteenth | sixteenth | seventeenth | eighteenth | nineteenth | twentieth | twenty <o1> | thirtieth | thirty first;
<month> = ${months.split(' ').join(' | ')};
<weekday> = ${weekdays.split(' ').join(' | ')};
<date> = [on] ([the] (<ordinal> | <n99>) [of] <month> | <month> [the] (<ordinal> | <n99>) | [next | this] <weekday>) | today | tomorrow | [the] day after tomorrow | next (week | month);
<digit> = zero | oh | <d1>;
`;

/**
 * A digit string: any number of digits, or exactly `count` when the block knows it (an order
 * number of 6). With any number the decoder dropped digits it could not place (espeak-ng's
 * "zero" came back "the oh", whole digits vanished in noise); told to find six, it placed them.
 * bench/hearing-accuracy.ts, order numbers read back as said: tuning 10 -> 15 of 16, the six
 * development splits 24 -> 52 of 147 (docs/voice-pipeline.md).
 */
const digitsRule = (count: number | undefined): string => `<digits> = ${count ? Array.from({ length: count }, () => '<digit>').join(' ') : '<digit>+'};\n`;
const valueVocabulary = new Set(
  `${months} ${weekdays} one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand lakh lakhs crore and point zero oh first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth thirtieth the of next this on today tomorrow day after week month`.split(' '),
);

/** The words of a reading that can make a value (dates, amounts, digits), in order; '' when none is expected. */
export function valueWordsOf(text: string, input: Pick<GrammarInput, 'values'>): string {
  if (input.values.length === 0) return '';
  return text.split(' ').filter((w) => valueVocabulary.has(w) && !carrierWords.has(w)).join(' ');
}

/**
 * Carrier words: the frame callers put around an answer ("yes *I will be there*", "no, *I want to*
 * cancel"). They carry no meaning of their own, so they never make one, but speech they cover
 * beside a meaning is part of that answer, not unexplained sound. Negations ("not", "don't",
 * "can't") are not carriers: "I don't want to cancel" must not count as a confident "cancel".
 */
const carrierWords = new Set(
  "i i'm i'll will would want to like be there come can it it's is that please thank thanks you we my me the a and so just well am do going".split(' '),
);

/** Words that never carry an answer: an echo of the question is no answer to it. */
const neverFrame = new Set(['yes', 'yeah', 'yep', 'sure', 'okay', 'ok', 'maybe', 'ji', 'no', 'nope', 'not', "don't", 'dont', "can't", 'cannot', "won't", 'never', 'nahi', 'nahin', 'haan']);

/**
 * Where a digit string is expected (an order number) the common carriers are no frame but the
 * digits themselves misread: "one two one two" came back "want two want two", and over G.711
 * (the /s/ of "six" and "seven" lives above the band) "six" came back "it", "that", "thank" or
 * "going", "seven" "am" and "one" "can" (bench/hearing-accuracy.ts, tuning split). So a digit
 * string's frame is only the words of the question asked and a few that sound like no digit.
 */
const digitFrame = ['my', 'is', 'the', 'please', 'number', 'order'];

/** The carrier words of an expectation: the common ones and the words of the question asked. */
function carriersOf(input: Pick<GrammarInput, 'frameWords' | 'values'>): ReadonlySet<string> {
  const words = (input.frameWords ?? []).flatMap((w) => w.toLowerCase().split(/[^a-z']+/)).filter((w) => w && !neverFrame.has(w));
  if (input.values.includes('digits')) return new Set([...digitFrame, ...words.filter((w) => !digitSoundAlikes.has(w))]);
  return new Set([...carrierWords, ...words]);
}

/** Question words that sound like a digit: "want" and "can" one, "to" and "do" two, "it" and "that" six, "am" seven. */
const digitSoundAlikes = new Set(['want', 'to', 'do', 'it', "it's", 'that', 'can', 'am']);

export interface GrammarInput {
  readonly phrases: readonly PhraseGroup[];
  readonly values: readonly SpokenValue[];
  /** Single words to accept anywhere (the number's boosted keywords). */
  readonly words: readonly string[];
  /**
   * Words a question may be made of (the knowledge library's vocabulary). They never make or
   * back a meaning: heard beside one, they count against it; heard without one, the question is
   * the reading (answered from the library, never acted on).
   */
  readonly questionWords?: readonly string[];
  /** The words of the question asked: carrier words for this block (ListenExpectation.frameWords). */
  readonly frameWords?: readonly string[];
  /** A spoken digit string has exactly this many digits (ListenExpectation.digitCount). */
  readonly digitCount?: number;
}

function tokensOf(text: string, known: ReadonlySet<string>): string[] {
  return text
    .toLowerCase()
    .split(/[^a-z']+/)
    .filter((w) => w && known.has(w));
}

/** Each group's phrases as known-word sequences (unknown words dropped, empty phrases gone). */
function groupTokens(groups: readonly PhraseGroup[], known: ReadonlySet<string>): { group: PhraseGroup; phrases: string[][] }[] {
  return groups
    .map((group) => ({
      group,
      phrases: [...new Set(group.phrases.flatMap((p) => spellings(tokensOf(p, known).join(' '), known)).filter(Boolean))].map((p) => p.split(' ')),
    }))
    .filter((g) => g.phrases.length > 0);
}

/**
 * Contractions and their full forms, as a phrase may be written and said either way: a recipe's
 * "I will be there" said "I'll be there" (or decoded so: "i'll" is also a carrier word) is the
 * same phrase, not carrier words around nothing.
 */
const contractions: ReadonlyArray<readonly [string, string]> = [
  ['i will', "i'll"],
  ['i am', "i'm"],
  ['i would', "i'd"],
  ['we will', "we'll"],
  ['it is', "it's"],
  ['that is', "that's"],
  ['do not', "don't"],
  ['can not', "can't"],
  ['cannot', "can't"],
  ['will not', "won't"],
];

/** A phrase's tokens as written, all contracted and all spelled out (those the dictionary knows). */
function spellings(phrase: string, known: ReadonlySet<string>): string[] {
  const replaceAll = (text: string, pairs: ReadonlyArray<readonly [string, string]>): string =>
    pairs.reduce((out, [from, to]) => out.replace(new RegExp(`(?<=^| )${from}(?= |$)`, 'g'), to), text);
  const contracted = replaceAll(phrase, contractions);
  const spelled = replaceAll(phrase, contractions.filter(([full]) => full !== 'cannot').map(([full, short]) => [short, full] as const));
  const knows = (p: string): boolean => p.split(' ').every((w) => known.has(w));
  return [...new Set([phrase, contracted, spelled].filter((p) => p && (p === phrase || knows(p))))];
}

/**
 * JSGF: any sequence of expected phrases, values, keywords and fillers (only fillers when nothing
 * expected is in the dictionary: then every utterance comes back empty, never as a guess).
 * `without` leaves one group out (to see how well the audio fits the rest: the n-best).
 */
export function buildRecognitionGrammar(input: GrammarInput, known: ReadonlySet<string>, without?: string): string {
  const groups = groupTokens(input.phrases, known).filter((g) => g.group.name !== without);
  const words = [...new Set([...input.words, ...(input.questionWords ?? [])].flatMap((w) => tokensOf(w, known)))];
  const items: string[] = [];
  const rules: string[] = [];
  groups.forEach((g, i) => {
    items.push(`<g${i}>`);
    rules.push(`<g${i}> = ${g.phrases.map((p) => `( ${p.join(' ')} )`).join(' | ')};`);
  });
  for (const value of new Set(input.values)) items.push(`<${value}>`);
  if (words.length > 0) {
    items.push('<keyword>');
    rules.push(`<keyword> = ${words.sort().join(' | ')};`);
  }
  // With nothing to expect, nothing may be heard (not even the frame of an answer).
  const carriers = groups.length > 0 || input.values.length > 0 ? [...carriersOf(input)].filter((w) => known.has(w) && !words.includes(w)) : [];
  if (carriers.length > 0) {
    items.push('<carrier>');
    rules.push(`<carrier> = ${carriers.sort().map((w) => `/${CARRIER_WEIGHT}/ ${w}`).join(' | ')};`);
  }
  items.push('<filler>');
  rules.push(`<filler> = ${phones.map((p) => fillerPrefix + p.toLowerCase()).join(' | ')};`);
  const values = input.values.length > 0 ? valueRules + digitsRule(input.digitCount) : '';
  return `#JSGF V1.0;\ngrammar utterance;\npublic <utterance> = <item>+;\n<item> = ${items.join(' | ')};\n${rules.join('\n')}\n${values}`;
}

export interface TimedWord {
  readonly word: string;
  /** Seconds. */
  readonly start: number;
  readonly end: number;
}

/** One decoding as the decoder reports its best path: the units and the path's total score. */
export interface Decoding {
  readonly units: readonly TimedWord[];
  /** Log-likelihood of the best path: acoustic + grammar scores + word insertion penalties. */
  readonly score: number;
  readonly frames: number;
}

/** One entry of a decoder's best path, frames of 10 ms (recogniser/protocol.ts). */
export interface PathEntry {
  readonly word: string;
  readonly startFrame: number;
  readonly endFrame: number;
  readonly acoustic: number;
  readonly language: number;
}

/**
 * Units and path score of a decoder's best path (the worker's `seg()` entries), so that two
 * decodings of the same audio can be compared. The score is the entries' acoustic and grammar
 * scores plus the search's insertion penalty once more per unit: the thresholds on score gaps
 * (the question margin here, the rival check in the blocks) were measured that way, from the
 * backtrace pocketsphinx_continuous logged, and they stay meaningful only if it is kept.
 */
export function decodingOf(path: { readonly segments: readonly PathEntry[]; readonly wordPenalty: number }): Decoding {
  const units: TimedWord[] = [];
  let score = 0;
  let frames = 0;
  for (const entry of path.segments) {
    const word = entry.word.replace(/\(\d+\)$/, '');
    score += entry.acoustic + entry.language;
    frames = Math.max(frames, entry.endFrame + 1);
    if (word === '<sil>' || word === '(NULL)' || word === '<s>' || word === '</s>' || word.startsWith('[') || word.startsWith('+')) continue;
    score += path.wordPenalty;
    units.push({ word, start: entry.startFrame / 100, end: (entry.endFrame + 1) / 100 });
  }
  return { units, score, frames };
}

export interface ScoredHypothesis {
  /** The expected words heard, fillers removed ('' when none). */
  readonly text: string;
  /** Share of the speech covered by one meaning (plus yes/no, values, keywords), 0..1. */
  readonly confidence: number;
  /** The phrase group that covers most of the speech, if any. */
  readonly dominant?: string;
}

/** Text, confidence and dominant meaning of one recognition. */
export function scoreHypothesis(units: readonly TimedWord[], input: GrammarInput, known: ReadonlySet<string>): ScoredHypothesis {
  let first = 0;
  let last = units.length - 1;
  // A filler is one phone (50-150 ms spoken); one held far longer at an edge is the line's noise
  // before or after the speech (a VAD hangover, a click), not a sound the caller made.
  const edge = (u: TimedWord): boolean => edgeNoise.has(u.word) || (u.word.startsWith(fillerPrefix) && u.end - u.start > LONG_PHONE_S);
  while (first <= last && edge(units[first]!)) first++;
  while (last >= first && edge(units[last]!)) last--;
  const speech = units.slice(first, last + 1);
  // Inside the speech too, a filler counts for at most one long phone (a pause decoded as one).
  const span = (u: TimedWord): number => Math.max(0.01, Math.min(u.end - u.start, u.word.startsWith(fillerPrefix) ? LONG_PHONE_S : Infinity));
  const total = speech.reduce((sum, u) => sum + span(u), 0);
  const groups = groupTokens(input.phrases, known);
  const keywords = new Set(input.words.flatMap((w) => tokensOf(w, known)));
  const questionWords = new Set((input.questionWords ?? []).flatMap((w) => tokensOf(w, known)));
  const carriers = carriersOf(input);
  const byGroup = new Map<string, number>();
  let other = 0;
  let carrier = 0;
  /** Carrier time before the first yes/no: not the frame of a bare yes/no (see below). */
  let carrierBeforePolar = 0;
  let polarSeen = false;
  let question = 0;
  /** The content words outside expected phrases, in order. */
  const outsidePhrases: string[] = [];
  for (let i = 0; i < speech.length; ) {
    const match = longestPhrase(speech, i, groups);
    if (match) {
      const time = speech.slice(i, i + match.length).reduce((sum, u) => sum + span(u), 0);
      byGroup.set(match.group.name, (byGroup.get(match.group.name) ?? 0) + time);
      polarSeen ||= match.group.neutral === true;
      i += match.length;
      continue;
    }
    const word = speech[i]!;
    if (!word.word.startsWith(fillerPrefix) && !carriers.has(word.word)) outsidePhrases.push(word.word);
    const valueWord = input.values.length > 0 && valueVocabulary.has(word.word);
    if (!valueWord && carriers.has(word.word)) {
      carrier += span(word);
      if (!polarSeen) carrierBeforePolar += span(word);
    }
    else if (!valueWord && !keywords.has(word.word) && questionWords.has(word.word)) question += span(word);
    else if (!word.word.startsWith(fillerPrefix) && (valueWord || keywords.has(word.word))) other += span(word);
    i++;
  }
  const neutral = new Set(groups.filter((g) => g.group.neutral).map((g) => g.group.name));
  const ranked = [...byGroup.entries()].sort((a, b) => b[1] - a[1]);
  // A question that merely brushes an expected phrase ("how often should I water ..." heard with
  // "goodbye" in it) is a question: the phrase is not what the caller mostly said.
  const asked = question > (ranked[0]?.[1] ?? 0);
  const meaning = asked ? undefined : ranked.find(([name]) => !neutral.has(name));
  // Yes and no both said: only the larger counts; a second meaning counts against the first.
  const polar = asked ? undefined : ranked.find(([name]) => neutral.has(name));
  // Values back a meaning ("reschedule to next monday") or stand alone as the answer ("the third
  // of december"); beside a bare yes/no they are more likely noise bent into dates and numbers.
  const values = meaning || !polar ? other : 0;
  // A bare yes/no is framed by what follows it ("no, I can't come"); a yes/no heard only at the
  // end of other speech ("I am driving right now" -> "... i going i nope") is not an answer framed.
  const framing = meaning || asked ? carrier : polar ? carrier - carrierBeforePolar : 0;
  const covered = (meaning?.[1] ?? 0) + (polar?.[1] ?? 0) + values + (asked ? question : 0) + framing;
  // A question's reading is its content words, without the phrases and carrier words it brushed
  // ("... no my refunded come thank"): read as words, a stray "no" or "thank" would be taken for
  // an answer instead of the question.
  const text = asked
    ? outsidePhrases.join(' ')
    : speech.filter((u) => !u.word.startsWith(fillerPrefix)).map((u) => u.word).join(' ');
  const dominant = meaning?.[0] ?? polar?.[0];
  return { text, confidence: total > 0 ? Math.min(1, covered / total) : 0, ...(dominant ? { dominant } : {}) };
}

/**
 * Seconds: a filler this short between two words of a phrase is a slurred join or an "uh"
 * ("i'll [uh] be there"), not other speech: the phrase is still heard.
 */
const JOIN_S = 0.08;

/** The longest phrase starting at `at`, in units (short fillers inside it included). */
function longestPhrase(units: readonly TimedWord[], at: number, groups: readonly { group: PhraseGroup; phrases: string[][] }[]): { group: PhraseGroup; length: number } | undefined {
  let best: { group: PhraseGroup; length: number; words: number } | undefined;
  for (const { group, phrases } of groups) {
    for (const phrase of phrases) {
      if (phrase.length <= (best?.words ?? 0)) continue;
      const length = phraseAt(units, at, phrase);
      if (length) best = { group, length, words: phrase.length };
    }
  }
  return best && { group: best.group, length: best.length };
}

/** Units the phrase spans from `at` (0 when it is not there). */
function phraseAt(units: readonly TimedWord[], at: number, phrase: readonly string[]): number {
  let i = at;
  for (const [k, word] of phrase.entries()) {
    if (k > 0) while (units[i]?.word.startsWith(fillerPrefix) && units[i]!.end - units[i]!.start <= JOIN_S) i++;
    if (units[i]?.word !== word) return 0;
    i++;
  }
  return i - at;
}
