import assert from 'node:assert/strict';
import { sentencesOf, splitSentences, takeSentences, unspokenWords } from './sentences.js';

describe('sentence cutting for speech', () => {
  it('cuts complete sentences and keeps the unfinished rest (decimals are not sentence ends)', () => {
    assert.deepEqual(takeSentences('Your EMI is 12.5 lakh. Pay by Friday! And'), { sentences: ['Your EMI is 12.5 lakh.', 'Pay by Friday!'], rest: 'And' });
    assert.deepEqual(splitSentences('नमस्ते। आप कैसे हैं?'), ['नमस्ते।', 'आप कैसे हैं?']);
  });

  it('yields each sentence of a streamed reply as soon as it is complete', async () => {
    async function* pieces(): AsyncIterable<string> {
      yield 'Sure, I can';
      yield ' help. Which da';
      yield 'te suits you?';
    }
    const out: string[] = [];
    for await (const s of sentencesOf(pieces())) out.push(s);
    assert.deepEqual(out, ['Sure, I can help.', 'Which date suits you?']);
  });

  it('maps the played fraction of a sentence to the words not yet heard', () => {
    assert.equal(unspokenWords('one two three four', 0.5), 'three four');
    assert.equal(unspokenWords('one two three four', 0), 'one two three four');
    assert.equal(unspokenWords('one two three four', 1), '');
  });
});
