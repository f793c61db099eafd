import assert from 'node:assert/strict';
import { classify, confusionLines, summarise, type AmdSample } from './amd-corpus.js';
import { amdTuningSpec as amdCorpusSpec } from './amd-tuning-set.js';
import { amdHeldOutSpec } from './amd-heldout-set.js';
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

  it('decides every opening of the tuning split correctly and takes no person for a machine (times: bench/amd-confusion.ts)', () => {
    const rows = classify(samples);
    const report = `\n${confusionLines(rows).join('\n')}\n${rows.map((r) => `${r.name}: ${r.verdict} (${r.reason}) after ${r.afterMs} ms`).join('\n')}`;
    const s = summarise(rows);
    assert.equal(s.table.human.machine, 0, `people taken for machines:${report}`);
    assert.ok(s.correct >= 0.95 * s.total, `${s.correct}/${s.total} correct:${report}`);
  });

  it('live answers that end in a question are people, long ones included', () => {
    const questions = new Set(amdCorpusSpec.filter((s) => s.truth === 'human' && s.parts.some((p) => 'say' in p && p.say.trim().endsWith('?'))).map((s) => s.name));
    const rows = classify(samples.filter((s) => questions.has(s.name)));
    assert.ok(rows.length >= 8 && rows.some((r) => r.name.includes('priya-accounts-team')));
    for (const r of rows) assert.equal(r.verdict, 'human', `${r.name}: ${r.verdict} (${r.reason}) after ${r.afterMs} ms`);
  });

  it('greetings that open with a short phrase and a pause are machines, decided while the greeting is read', () => {
    const pausing = amdCorpusSpec.filter((s) => s.truth === 'machine' && s.parts.filter((p) => 'say' in p).length >= 2);
    const rows = classify(samples.filter((s) => pausing.some((p) => p.name === s.name)));
    assert.ok(rows.length >= 8);
    for (const r of rows) {
      const speechEnds = samples.find((s) => s.name === r.name)?.speechEndsAtMs ?? 0;
      assert.ok(r.verdict === 'machine' && r.afterMs <= speechEnds + 1000, `${r.name}: ${r.verdict} after ${r.afterMs} ms (speech ends ${speechEnds} ms)`);
    }
  });

  it('the held-out split is what it claims: other voices than the tuning split, other texts, tempo changes, noise at 20 dB SNR, beeps 400-2000 Hz (only the bench measures it)', () => {
    const voicesOf = (specs: typeof amdHeldOutSpec): Set<string> => new Set(specs.flatMap((s) => s.parts.flatMap((p) => ('say' in p ? [JSON.stringify(p.voice)] : []))));
    const textsOf = (specs: typeof amdHeldOutSpec): Set<string> => new Set(specs.flatMap((s) => s.parts.flatMap((p) => ('say' in p ? [p.say] : []))));
    const tuningVoices = voicesOf(amdCorpusSpec);
    const tuningTexts = textsOf(amdCorpusSpec);
    assert.equal(amdHeldOutSpec.length, 20);
    assert.deepEqual([...voicesOf(amdHeldOutSpec)].filter((v) => tuningVoices.has(v)), []);
    // One-word openings ("Hello?", "Hi.") are everyone's; no sentence is shared.
    assert.deepEqual([...textsOf(amdHeldOutSpec)].filter((t) => tuningTexts.has(t) && t.split(' ').length > 1), []);
    assert.ok(amdHeldOutSpec.filter((s) => s.tempo !== undefined).length >= 3);
    assert.ok(amdHeldOutSpec.filter((s) => s.noise && 'snrDb' in s.noise && s.noise.snrDb === 20).length >= 5);
    const beeps = amdHeldOutSpec.flatMap((s) => s.parts.flatMap((p) => ('beep' in p ? [{ hz: p.beep.hz, noisy: Boolean(s.noise) }] : [])));
    assert.ok(Math.min(...beeps.map((b) => b.hz)) <= 400 && Math.max(...beeps.map((b) => b.hz)) >= 2000);
    assert.ok(beeps.filter((b) => b.noisy).length >= 3, 'beeps under noise');
  });
});
