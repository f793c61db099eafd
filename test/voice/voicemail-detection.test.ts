import assert from 'node:assert/strict';
import { classify, confusionLines, summarise, type AmdSample } from './amd-corpus.js';
import { amdTuningSpec as amdCorpusSpec } from './amd-tuning-set.js';
import { amdSplit } from './amd-splits.js';

/**
 * Answering-machine detection over a varied set of call openings (test/voice/amd-corpus.ts:
 * flite and espeak-ng voices, greetings opening with a short phrase and a pause, beep-only
 * machines at 440-1400 Hz, people answering "Hello?" once or twice, background noise, mu-law).
 * The error we accept is a missed machine, never a person taken for one: a person hung up on (or
 * read a voicemail message) is lost, a machine talked to is only a wasted call.
 */
describe('answering-machine detection over a varied set of greetings', function () {
  this.timeout(120_000);
  let samples: AmdSample[];

  before(async () => {
    samples = await amdSplit('tuning');
  });

  it('has the variety it claims: at least 10 of each, flite and espeak-ng voices, beep-only machines, repeated hellos, noise', () => {
    const truths = amdCorpusSpec.map((s) => s.truth);
    assert.ok(truths.filter((t) => t === 'human').length >= 10 && truths.filter((t) => t === 'machine').length >= 10);
    const voices = new Set(amdCorpusSpec.flatMap((s) => s.parts.flatMap((p) => ('say' in p ? [JSON.stringify(p.voice)] : []))));
    for (const v of ['kal', 'slt', 'rms', 'awb']) assert.ok(voices.has(JSON.stringify({ flite: v })), `flite ${v}`);
    assert.ok([...voices].filter((v) => v.includes('espeak')).length >= 4, 'espeak-ng voices');
    const beepOnly = amdCorpusSpec.filter((s) => s.parts.every((p) => !('say' in p)));
    assert.ok(beepOnly.length >= 3, 'beep-only machines');
    assert.ok(amdCorpusSpec.filter((s) => s.noise).length >= 4, 'background noise');
  });

  it('decides at least 9 in 10 correctly within 3 s of answer, and takes no person for a machine', () => {
    const rows = classify(samples);
    const report = `\n${confusionLines(rows).join('\n')}\n${rows.map((r) => `${r.name}: ${r.verdict} (${r.reason}) after ${r.afterMs} ms`).join('\n')}`;
    const s = summarise(rows);
    assert.equal(s.table.human.machine, 0, `people taken for machines:${report}`);
    assert.ok(s.correctInBudget >= 0.9 * s.total, `${s.correctInBudget}/${s.total} correct within 3 s:${report}`);
  });

  it('greetings that open with a short phrase and a pause are machines, each within 3 s', () => {
    const pausing = new Set(amdCorpusSpec.filter((s) => s.truth === 'machine' && s.parts.filter((p) => 'say' in p).length >= 2).map((s) => s.name));
    const rows = classify(samples.filter((s) => pausing.has(s.name)));
    assert.ok(rows.length >= 8);
    for (const r of rows) assert.ok(r.verdict === 'machine' && r.afterMs <= 3000, `${r.name}: ${r.verdict} after ${r.afterMs} ms`);
  });
});
