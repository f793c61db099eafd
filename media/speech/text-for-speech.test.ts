import assert from 'node:assert/strict';
import { AppError } from '../../core/errors.js';
import { englishNumber, normaliseForSpeech } from './normalise.js';
import { MAX_PRONUNCIATION_WORDS, PronunciationLexicon, type PronunciationRule } from './pronunciation.js';

describe('speech normalisation', () => {
  const say = (text: string, language: string): string => normaliseForSpeech(text, language);

  it('numbers: Indian grouping for en-IN, "and" after hundreds outside North America', () => {
    assert.equal(englishNumber(1_234_567), 'one million two hundred thirty-four thousand five hundred sixty-seven');
    assert.equal(englishNumber(1_500_000, { indian: true }), 'fifteen lakh');
    assert.equal(say('You owe 2,500.', 'en-US'), 'You owe two thousand five hundred.');
    assert.equal(say('1,005 plants and 125 pots', 'en-US'), 'one thousand five plants and one hundred twenty-five pots');
    assert.equal(say('1,005 plants and 125 pots', 'en-GB'), 'one thousand and five plants and one hundred and twenty-five pots');
    assert.equal(say('1,25,000 people', 'en-IN'), 'one lakh twenty-five thousand people');
    assert.equal(say('a 4G phone', 'en-US'), 'a four G phone');
  });

  it('currency with minor units, scale words and the Indian "/-"', () => {
    assert.equal(say('Your EMI is ₹12,500.50 today', 'en-IN'), 'Your EMI is twelve thousand five hundred rupees and fifty paise today');
    assert.equal(say('$1', 'en-US'), 'one dollar');
    assert.equal(say('$0.50', 'en-US'), 'fifty cents');
    assert.equal(say('₹5 lakh', 'en-IN'), 'five lakh rupees');
    assert.equal(say('Rs. 1,250/- only', 'en-IN'), 'one thousand two hundred and fifty rupees only');
    assert.equal(say('£3.20', 'en-GB'), 'three pounds and twenty pence');
    assert.equal(say('500 INR', 'en-IN'), 'five hundred rupees');
  });

  describe('dates: month first for en-US, "the third of December" for en-GB and en-IN, the year always said', () => {
    const cases: [string, string, string, string][] = [
      // text, en-US, en-GB, en-IN
      ['on 2026-12-03', 'on December third, twenty twenty-six', 'on the third of December twenty twenty-six', 'on the third of December twenty twenty-six'],
      ['by December 3, 2026', 'by December third, twenty twenty-six', 'by the third of December twenty twenty-six', 'by the third of December twenty twenty-six'],
      ['from 3rd Dec', 'from December third', 'from the third of December', 'from the third of December'],
      ['due 05/11/2026', 'due May eleventh, twenty twenty-six', 'due the fifth of November twenty twenty-six', 'due the fifth of November twenty twenty-six'],
      ['due 25/11/2026', 'due November twenty-fifth, twenty twenty-six', 'due the twenty-fifth of November twenty twenty-six', 'due the twenty-fifth of November twenty twenty-six'],
      ['in 2006-01-09', 'in January ninth, two thousand six', 'in the ninth of January two thousand and six', 'in the ninth of January two thousand and six'],
    ];
    for (const [text, us, gb, inEn] of cases) {
      it(text, () => {
        assert.equal(say(text, 'en-US'), us);
        assert.equal(say(text, 'en-GB'), gb);
        assert.equal(say(text, 'en-IN'), inEn);
      });
    }
    it('no doubled article, impossible dates left alone', () => {
      assert.equal(say('the 2026-12-03 deadline', 'en-GB'), 'the third of December twenty twenty-six deadline');
      assert.doesNotMatch(say('on 2026-02-30', 'en-US'), /February|March/);
      assert.equal(say('on 2028-02-29', 'en-US'), 'on February twenty-ninth, twenty twenty-eight');
    });
  });

  it('times: "ten thirty", "eleven A M", 24-hour times the 12-hour way', () => {
    for (const language of ['en-US', 'en-GB', 'en-IN']) {
      assert.equal(say('at 10:30', language), 'at ten thirty');
      assert.equal(say('at 11 AM', language), 'at eleven A M');
      assert.equal(say('at 11am', language), 'at eleven A M');
      assert.equal(say('by 7:45 p.m. Thanks', language), 'by seven forty-five P M. Thanks');
      assert.equal(say('at 10.30 am', language), 'at ten thirty A M');
      assert.equal(say('at 14:00', language), 'at two P M');
      assert.equal(say('at 14:30 hrs', language), 'at two thirty P M');
      assert.equal(say('at 09:05', language), 'at nine oh five A M');
      assert.equal(say('at 00:15', language), 'at twelve fifteen A M');
      assert.equal(say('at 12:00', language), 'at twelve noon');
      assert.equal(say('at 10:00', language), "at ten o'clock");
    }
  });

  it('phone numbers digit by digit', () => {
    assert.equal(say('call +919812345678', 'en-IN'), 'call plus nine one nine eight one two three four five six seven eight');
    assert.equal(say('call +91 98450 12345', 'en-IN'), 'call plus nine one nine eight four five zero one two three four five');
    assert.equal(say('call 98450 12345', 'en-IN'), 'call nine eight four five zero one two three four five');
    assert.equal(say('call 080 41234567', 'en-IN'), 'call zero eight zero four one two three four five six seven');
    assert.equal(say('call (415) 555-0123', 'en-US'), 'call four one five five five five zero one two three');
    assert.equal(say('call +1 415-555-0123', 'en-US'), 'call plus one four one five five five five zero one two three');
    assert.equal(say('call +44 20 7946 0958', 'en-GB'), 'call plus four four two zero seven nine four six zero nine five eight');
  });

  it('ids letter by letter and digit by digit, amounts with units stay amounts', () => {
    for (const language of ['en-US', 'en-GB', 'en-IN']) {
      assert.equal(say('Loan LN-1001 is due', language), 'Loan L N one zero zero one is due');
      assert.equal(say('order number 45012', language), 'order number four five zero one two');
      assert.equal(say('PNR 4512345', language), 'PNR four five one two three four five');
      assert.equal(say('ticket #1042', language), 'ticket one zero four two');
      assert.equal(say('code 0042', language), 'code zero zero four two');
      assert.equal(say('a 20GB plan', language), 'a twenty gigabytes plan');
    }
  });

  it('ordinals, units', () => {
    assert.equal(say('the 21st', 'en-US'), 'the twenty-first');
    assert.equal(say('the 101st', 'en-GB'), 'the one hundred and first');
    assert.equal(say('5 km and 1 kg, 20%', 'en-US'), 'five kilometres and one kilogram, twenty percent');
  });

  it('markdown is never read out: headings, emphasis, bullets, links, code ticks, tables', () => {
    assert.equal(say('## Refunds\nRefunds take **5 days**, see [the policy](https://x.example/p).', 'en-US'), 'Refunds. Refunds take five days, see the policy.');
    assert.equal(say('- Water *weekly*\n- Use `mild` soap', 'en-US'), 'Water weekly. Use mild soap.');
    assert.equal(say('| Plan | Price |\n|---|---|\n| Basic | $10 |', 'en-US'), 'Plan: Basic, Price: ten dollars.');
    assert.equal(normaliseForSpeech('# Hinweis\n**Achtung**', 'de-DE', []), 'Hinweis. Achtung');
    // DTMF keys are not markdown.
    assert.equal(say('Press * to go back or # to repeat.', 'en-US'), 'Press * to go back or # to repeat.');
  });

  it('runs only the rules the block enables', () => {
    assert.equal(normaliseForSpeech('₹500 on 2026-12-03', 'en-IN', ['currency']), 'five hundred rupees on 2026-12-03');
    assert.equal(normaliseForSpeech('₹500', 'en-IN', []), '₹500');
  });

  it('a value the caller must be able to check is read character by character, whatever the rules make of it', () => {
    // An order number keyed as 123456 is no amount ("one lakh twenty-three thousand ...").
    assert.equal(normaliseForSpeech('Your order 123456 is on its way, 2 items.', 'en-IN', undefined, ['123456']), 'Your order one two three four five six is on its way, two items.');
    assert.equal(normaliseForSpeech('Just to check: 007?', 'en-US', [], ['007']), 'Just to check: zero zero seven?');
    // Only where it stands alone, and spaced for engines that read digits themselves.
    assert.equal(normaliseForSpeech('1234567 and 123', 'en-US', undefined, ['123']), 'one million two hundred thirty-four thousand five hundred sixty-seven and one two three');
    assert.equal(normaliseForSpeech('आपका ऑर्डर 123456', 'hi-IN', undefined, ['123456']), 'आपका ऑर्डर 1 2 3 4 5 6');
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
