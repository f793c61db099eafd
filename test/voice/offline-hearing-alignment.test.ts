import assert from 'node:assert/strict';
import { PocketsphinxStt } from '../../media/speech/pocketsphinx-stt.js';
import { concat, silence, trimmedFlite } from './callee-audio.js';

/**
 * With no block listening (a Message playing, a greeting awaited), the offline recogniser decodes
 * a loop of common words. Under the default beams that search lost every path for some
 * alignments of the same answer (16, 24 and 56 samples, 2 to 7 ms, of lead-in before flite
 * slt's "Yes, I will be at home tomorrow." came back as nothing at all): the words a callee said over the Message were
 * then missing from the transcript, depending on where the VAD happened to cut the turn.
 */
describe('offline hearing does not depend on where the turn was cut', function () {
  this.timeout(120_000);

  it('hears words in the same answer at every lead-in from 0 to 64 samples (1 ms steps)', async () => {
    const stt = new PocketsphinxStt();
    const speech = await trimmedFlite('Yes, I will be at home tomorrow.');
    const empty: number[] = [];
    for (let lead = 0; lead <= 64; lead += 8) {
      const pcm = concat(new Int16Array(lead), speech, silence(600));
      const stream = await stt.open({ language: 'en-US', keywords: [], signal: new AbortController().signal });
      for (let i = 0; i < pcm.length; i += 160) stream.push(pcm.slice(i, i + 160));
      if (!(await stream.finish()).trim()) empty.push(lead);
    }
    assert.deepEqual(empty, [], `nothing heard with these lead-ins (samples at 8 kHz): ${empty.join(', ')}`);
  });
});
