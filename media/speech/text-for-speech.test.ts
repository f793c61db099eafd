import assert from 'node:assert/strict';
import { AppError } from '../../core/errors.js';
import { englishNumber, normaliseForSpeech } from './normalise.js';
import { MAX_PRONUNCIATION_WORDS, PronunciationLexicon, type PronunciationRule } from './pronunciation.js';

describe('speech normalisation', () => {
  it('numbers, Indian grouping for en-IN', () => {
    assert.equal(englishNumber(1_234_567), 'one million two hundred thirty-four thousand five hundred sixty-seven');
    assert.equal(englishNumber(1_500_000, true), 'fifteen lakh');
    assert.equal(normaliseForSpeech('You owe 2,500.', 'en-US'), 'You owe two thousand five hundred.');
  });

  it('currency with minor units', () => {
    assert.equal(normaliseForSpeech('Your EMI is ₹12,500.50 today', 'en-IN'), 'Your EMI is twelve thousand five hundred rupees and fifty paise today');
    assert.equal(normaliseForSpeech('$1', 'en-US'), 'one dollar');
  });

  it('dates, times, ordinals, units and phone numbers', () => {
    assert.equal(normaliseForSpeech('on 2026-12-03 at 10:30', 'en-US'), 'on December third, twenty twenty-six at ten thirty');
    assert.equal(normaliseForSpeech('the 21st', 'en-US'), 'the twenty-first');
    assert.equal(normaliseForSpeech('5 km and 1 kg, 20%', 'en-US'), 'five kilometres and one kilogram, twenty percent');
    assert.equal(normaliseForSpeech('call +91 98450 12345', 'en-IN'), 'call plus nine one nine eight four five zero one two three four five');
  });

  it('runs only the rules the block enables', () => {
    assert.equal(normaliseForSpeech('₹500 on 2026-12-03', 'en-IN', ['currency']), 'five hundred rupees on 2026-12-03');
    assert.equal(normaliseForSpeech('₹500', 'en-IN', []), '₹500');
  });

  it('Hindi: currency words and Devanagari digits, text untouched otherwise', () => {
    assert.equal(normaliseForSpeech('कुल ₹1,200 है, कमरा ३', 'hi-IN'), 'कुल 1200 रुपये है, कमरा 3');
    assert.equal(normaliseForSpeech('مرحبا 5', 'ar'), 'مرحبا 5');
  });
});

describe('pronunciation words', () => {
  const rule = (word: string, pronunciation: string, caseSensitive = false, speechProfiles: string[] = []): PronunciationRule => ({ word, pronunciation, caseSensitive, speechProfiles });

  it('replaces whole words, case-insensitive unless the flag says otherwise', () => {
    const lex = new PronunciationLexicon([rule('Verloop', 'ver loop'), rule('US', 'you ess', true)]);
    assert.equal(lex.apply('verloop and VERLOOP, not Verloops'), 'ver loop and ver loop, not Verloops');
    assert.equal(lex.apply('the US and us'), 'the you ess and us');
  });

  it('applies profile-scoped rules only to those speech profiles, longer words first', () => {
    const lex = new PronunciationLexicon([rule('AI', 'A I'), rule('AI Labs', 'eh eye labs', false, ['Priya'])]);
    assert.equal(lex.apply('AI Labs', 'Priya'), 'eh eye labs');
    assert.equal(lex.apply('AI Labs', 'Other'), 'A I Labs');
  });

  it('works on Devanagari words', () => {
    const lex = new PronunciationLexicon([rule('किस्त', 'kist')]);
    assert.equal(lex.apply('आपकी किस्त बाकी है'), 'आपकी kist बाकी है');
  });

  it(`refuses more than ${MAX_PRONUNCIATION_WORDS} words per agent`, () => {
    const many = Array.from({ length: MAX_PRONUNCIATION_WORDS + 1 }, (_, i) => rule(`w${i}`, 'x'));
    assert.throws(() => new PronunciationLexicon(many), (e: unknown) => e instanceof AppError && e.code === 'invalid_argument');
    assert.doesNotThrow(() => new PronunciationLexicon(many.slice(1)));
  });
});
