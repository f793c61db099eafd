import assert from 'node:assert/strict';
import { buildRecognitionGrammar, decodingOf, scoreHypothesis, valueWordsOf, type TimedWord } from './recognition-grammar.js';

const known = new Set(['yes', 'no', 'cancel', 'it', 'please', 'reschedule', 'to', 'next', 'monday', 'human', 'goodbye', 'bye', 'want']);
const input = {
  phrases: [
    { name: 'yes', phrases: ['yes'], neutral: true },
    { name: 'no', phrases: ['no'], neutral: true },
    { name: 'intent:cancel', phrases: ['cancel', 'please cancel it', "can't wait"] },
    { name: 'intent:reschedule', phrases: ['reschedule'] },
    { name: 'intent:human', phrases: ['human'] },
    { name: 'intent:goodbye', phrases: ['goodbye', 'bye'] },
  ],
  values: ['date' as const],
  words: [],
};
/** Units as the decoder reports them: [word, seconds]. */
const units = (...spans: [string, number][]): TimedWord[] => {
  let at = 0;
  return spans.map(([word, length]) => {
    const unit = { word, start: at, end: at + length };
    at += length;
    return unit;
  });
};

describe('offline recognition grammar and its confidence', () => {
  it('offers each phrase group, the value rules and a filler per phone; words the dictionary lacks are dropped', () => {
    const grammar = buildRecognitionGrammar(input, known);
    assert.match(grammar, /public <utterance> = <item>\+;/);
    assert.match(grammar, /\( please cancel it \)/);
    assert.doesNotMatch(grammar, /can't/);
    assert.match(grammar, /<date> = /);
    assert.match(grammar, /<filler> = ph_aa \| ph_ae/);
    assert.doesNotMatch(buildRecognitionGrammar(input, known, 'intent:cancel'), /please cancel it/, 'the n-best decode leaves the winning group out');
  });

  it('with nothing expected, only fillers: every utterance comes back empty, never a guess', () => {
    const grammar = buildRecognitionGrammar({ phrases: [], values: [], words: [] }, known);
    assert.match(grammar, /<item> = <filler>;/);
  });

  it('an answer that is mostly expected words is confident; line noise at the edges does not count', () => {
    const heard = scoreHypothesis(units(['ph_f', 0.2], ['no', 0.2], ['please', 0.3], ['cancel', 0.4], ['it', 0.1], ['ph_f', 0.2]), input, known);
    assert.equal(heard.text, 'no please cancel it');
    assert.equal(heard.dominant, 'intent:cancel');
    assert.ok(heard.confidence > 0.99, String(heard.confidence));
    // The endpointer's hangover after the answer, decoded as one "phone" held for half a second.
    const hangover = scoreHypothesis(units(['yes', 0.3], ['i', 0.2], ['will', 0.1], ['ph_p', 0.46]), input, known);
    assert.ok(hangover.confidence > 0.99, String(hangover.confidence));
  });

  it('a stray expected word inside other speech is doubtful ("I am driving right now" heard as "... no")', () => {
    const heard = scoreHypothesis(units(['ph_ay', 0.2], ['ph_ae', 0.3], ['ph_d', 0.1], ['ph_r', 0.4], ['ph_ay', 0.2], ['no', 0.2]), input, known);
    assert.equal(heard.text, 'no');
    assert.ok(heard.confidence < 0.2, String(heard.confidence));
  });

  it('carrier words ("I will", "want to") count beside a meaning, never make one', () => {
    const answer = scoreHypothesis(units(['yes', 0.3], ['i', 0.1], ['will', 0.2], ['come', 0.3]), input, known);
    assert.equal(answer.text, 'yes i will come');
    assert.equal(answer.dominant, 'yes');
    assert.ok(answer.confidence > 0.99, String(answer.confidence));
    const frameOnly = scoreHypothesis(units(['i', 0.1], ['will', 0.2], ['be', 0.2], ['there', 0.3]), input, known);
    assert.equal(frameOnly.dominant, undefined);
    assert.equal(frameOnly.confidence, 0);
    // Their own rule, each word less likely than an expected one: short function words fit any
    // fragment ("the third" was read "that there eight").
    assert.match(buildRecognitionGrammar(input, known), /<carrier> = [^;]*\/0\.01\/ want\b/);
    assert.doesNotMatch(buildRecognitionGrammar(input, known), /<keyword>/);
  });

  it('where a digit string is expected, the frame is the question and a few words that sound like no digit ("want", "to", "it", "am" were the digits misread)', () => {
    const digits = { phrases: input.phrases, values: ['digits' as const], words: [], frameWords: ['could', 'you', 'tell', 'me', 'the', 'order', 'number', 'to', 'it'] };
    const dictionary = new Set([...known, 'my', 'is', 'the', 'order', 'number', 'tell', 'could', 'you', 'me', 'that', 'am', 'can', 'i', 'will']);
    const grammar = buildRecognitionGrammar(digits, dictionary);
    const carriers = /<carrier> = ([^;]*);/.exec(grammar)?.[1] ?? '';
    for (const word of ['my', 'is', 'the', 'order', 'number', 'tell']) assert.match(carriers, new RegExp(`\\b${word}\\b`), word);
    assert.doesNotMatch(carriers, /\b(want|to|it|that|am|can|i|will)\b/);
    assert.match(grammar, /<digits> = /);
    // Scored the same way: "want two" is no frame around a digit string there.
    const heard = scoreHypothesis(units(['want', 0.3], ['two', 0.3]), digits, dictionary);
    assert.ok(heard.confidence < 0.6, String(heard.confidence));
  });

  it('a digit string of a known length is exactly that many digits; of any length, one or more', () => {
    const digits = { phrases: input.phrases, values: ['digits' as const], words: [] };
    assert.match(buildRecognitionGrammar({ ...digits, digitCount: 6 }, known), /<digits> = <digit> <digit> <digit> <digit> <digit> <digit>;/);
    assert.match(buildRecognitionGrammar(digits, known), /<digits> = <digit>\+;/);
  });

  it("the question's own words frame an answer like carrier words, never make one, and never a negation", () => {
    const withHome = new Set([...known, 'home', 'tomorrow', 'at', 'not']);
    const echo = units(['yes', 0.3], ['i', 0.1], ['will', 0.2], ['at', 0.1], ['home', 0.3], ['tomorrow', 0.5]);
    const asked = { ...input, values: [], frameWords: ['will', 'you', 'be', 'at', 'home', 'tomorrow', 'not'] };
    assert.ok(scoreHypothesis(echo, { ...input, values: [] }, withHome).confidence < 0.6, 'without the question: the echo is unexplained speech');
    assert.ok(scoreHypothesis(echo, asked, withHome).confidence > 0.99);
    assert.equal(scoreHypothesis(units(['at', 0.1], ['home', 0.3], ['tomorrow', 0.5]), asked, withHome).confidence, 0, 'no answer in it');
    assert.match(buildRecognitionGrammar(asked, withHome), /<carrier> = [^;]*\bhome\b/);
    assert.doesNotMatch(buildRecognitionGrammar(asked, withHome), /<carrier> = [^;]*\bnot\b/, 'a negation is never a frame');
  });

  it('a bare yes/no is framed by what follows it, not by carrier words before it ("I am driving right now" heard as "... i going i nope")', () => {
    const k = new Set([...known, 'nope', 'am', 'there', 'i', 'going']);
    const withNope = { ...input, phrases: input.phrases.map((g) => (g.name === 'no' ? { ...g, phrases: ['no', 'nope'] } : g)) };
    const trailing = scoreHypothesis(units(['am', 0.2], ['there', 0.2], ['i', 0.1], ['going', 0.25], ['i', 0.1], ['nope', 0.3]), withNope, k);
    assert.equal(trailing.dominant, 'no');
    assert.ok(trailing.confidence < 0.6, `doubtful: confirmed before anything is cancelled (${trailing.confidence})`);
    const leading = scoreHypothesis(units(['nope', 0.3], ['i', 0.1], ['am', 0.2], ['going', 0.25]), withNope, k);
    assert.ok(leading.confidence > 0.99, `${leading.confidence}`);
  });

  it('a phrase is heard contracted or spelled out, and across a slurred join: "I will be there" said "I\'ll [uh] be there" is the phrase', () => {
    const words = new Set(['that', 'i', 'will', "i'll", 'be', 'there', 'can', 'not', "can't", 'come']);
    const attend = { phrases: [{ name: 'intent:confirm', phrases: ['I will be there'] }, { name: 'intent:cancel', phrases: ["I can't come"] }], values: [], words: [] };
    const grammar = buildRecognitionGrammar(attend, words);
    assert.match(grammar, /\( i will be there \) \| \( i'll be there \)/);
    assert.match(grammar, /\( i can't come \) \| \( i can not come \)/);
    const heard = scoreHypothesis(units(['that', 0.2], ["i'll", 0.3], ['ph_uh', 0.05], ['be', 0.2], ['there', 0.4]), attend, words);
    assert.equal(heard.dominant, 'intent:confirm');
    assert.ok(heard.confidence > 0.99, String(heard.confidence));
  });

  it('two meanings in one utterance count only the larger one ("human ... goodbye")', () => {
    const heard = scoreHypothesis(units(['human', 0.5], ['ph_k', 0.2], ['goodbye', 0.4]), input, known);
    assert.equal(heard.dominant, 'intent:human');
    assert.ok(Math.abs(heard.confidence - 0.5 / 1.1) < 0.01, String(heard.confidence));
  });

  it('values back a meaning or stand alone, but not beside a bare yes/no (noise bent into dates)', () => {
    const withMeaning = scoreHypothesis(units(['reschedule', 0.6], ['next', 0.2], ['monday', 0.4]), input, known);
    assert.ok(withMeaning.confidence > 0.99);
    const alone = scoreHypothesis(units(['next', 0.2], ['monday', 0.4]), input, known);
    assert.ok(alone.confidence > 0.99);
    assert.equal(alone.dominant, undefined);
    const besidePolar = scoreHypothesis(units(['monday', 0.4], ['monday', 0.4], ['no', 0.2]), input, known);
    assert.ok(Math.abs(besidePolar.confidence - 0.2) < 0.01, String(besidePolar.confidence));
  });

  it('the value words of a reading, to compare two decodings of the same audio', () => {
    assert.equal(valueWordsOf('that there eight of december', { values: ['date'] }), 'eight of december');
    assert.equal(valueWordsOf('i promise to pay three thousand', { values: ['number'] }), 'three thousand');
    assert.equal(valueWordsOf('three thousand', { values: [] }), '', 'no values expected: nothing to compare');
  });

  it('question words (the knowledge library) never make a meaning: a question that brushes a phrase is a question', () => {
    const withQuestions = { ...input, questionWords: ['water', 'snake', 'plant'] };
    assert.match(buildRecognitionGrammar(withQuestions, new Set([...known, 'water', 'snake', 'plant'])), /<keyword> = .*snake/);
    const k = new Set([...known, 'water', 'snake', 'plant']);
    // "how often should I water my snake plant" heard with "goodbye" in it
    const question = scoreHypothesis(units(['ph_k', 0.1], ['goodbye', 0.35], ['water', 0.4], ['snake', 0.35], ['plant', 0.4]), withQuestions, k);
    assert.equal(question.dominant, undefined);
    assert.equal(question.text, 'water snake plant', 'the brushed phrase is not part of what the engine reads');
    assert.ok(question.confidence > 0.6, `the question is what was said (${question.confidence})`);
    // beside a meaning that is most of the speech, question words count against it
    const answer = scoreHypothesis(units(['human', 0.5], ['plant', 0.3]), withQuestions, k);
    assert.equal(answer.dominant, 'intent:human');
    assert.ok(answer.confidence < 0.7, `${answer.confidence}`);
  });

  it("reads the decoder's best path: units in seconds, and the path score with word penalties", () => {
    // As the worker reports pocketsphinx's seg(): word, start and end frame, acoustic and grammar score.
    const segments = [
      { word: '<sil>', startFrame: 0, endFrame: 26, acoustic: -97, language: -337 },
      { word: 'yes', startFrame: 27, endFrame: 55, acoustic: -1026, language: 0 },
      { word: '(NULL)', startFrame: 55, endFrame: 55, acoustic: 0, language: 0 },
      { word: 'ph_f(2)', startFrame: 56, endFrame: 68, acoustic: -415, language: 0 },
    ];
    const decoding = decodingOf({ segments, wordPenalty: -26 });
    assert.deepEqual(decoding.units, [
      { word: 'yes', start: 0.27, end: 0.56 },
      { word: 'ph_f', start: 0.56, end: 0.69 },
    ]);
    assert.equal(decoding.score, -97 - 337 - 1026 - 415 - 26 * 2);
    assert.equal(decoding.frames, 69);
  });
});
