import assert from 'node:assert/strict';
import { loadPronunciations } from './pocketsphinx-dictionary.js';
import { buildRecognitionGrammar } from './recognition-grammar.js';

describe('pocketsphinx dictionary (Debian en-us model)', () => {
  it('knows the extra words, not the filler pseudo-words', async () => {
    const { known, lines } = await loadPronunciations('/usr/share/pocketsphinx/model/en-us');
    for (const word of ['nahi', 'nahin', 'lakh', 'crore', 'yes']) assert.ok(known.has(word), word);
    assert.ok(!known.has('ph_aa'));
    assert.ok(lines.has('ph_aa'), 'fillers stay pronounceable');
  });

  it('keeps "nahi ji" whole in the no group: a bare "ji" is no answer', async () => {
    const { known } = await loadPronunciations('/usr/share/pocketsphinx/model/en-us');
    const phrases = [
      { name: 'yes', phrases: ['yes', 'haan ji'], neutral: true },
      { name: 'no', phrases: ['no', 'nahi', 'nahi ji', 'nahin'], neutral: true },
    ];
    const grammar = buildRecognitionGrammar({ phrases, values: [], words: [] }, known);
    const noRule = /<g1> = ([^;]*);/.exec(grammar)?.[1] ?? '';
    assert.match(noRule, /\( nahi ji \)/);
    assert.doesNotMatch(noRule, /\( ji \)/);
  });
});
