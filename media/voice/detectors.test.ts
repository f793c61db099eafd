import assert from 'node:assert/strict';
import { EspeakTts } from '../speech/espeak-tts.js';
import { Endpointer, EnergyVad } from './vad.js';
import { AnsweringMachineDetector, BeepDetector } from './voicemail-detector.js';

async function speech(text: string): Promise<Int16Array> {
  const parts: number[] = [];
  for await (const c of new EspeakTts().synthesize({ text, voice: '', language: 'en-US', signal: new AbortController().signal })) parts.push(...c);
  return Int16Array.from(parts);
}
const silence = (ms: number): Int16Array => new Int16Array(ms * 8);
const tone = (hz: number, ms: number, amp = 8000): Int16Array => Int16Array.from({ length: ms * 8 }, (_, i) => Math.round(amp * Math.sin((2 * Math.PI * hz * i) / 8000)));
const noise = (ms: number, amp: number): Int16Array => Int16Array.from({ length: ms * 8 }, () => Math.round((Math.random() * 2 - 1) * amp));
const concat = (...parts: Int16Array[]): Int16Array => {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};
function* frames(pcm: Int16Array): Iterable<Int16Array> {
  for (let i = 0; i + 160 <= pcm.length; i += 160) yield pcm.subarray(i, i + 160);
}

describe('voice activity detection and endpointing', function () {
  this.timeout(10_000);

  it('marks speech voiced and silence or hiss unvoiced', async () => {
    const vad = new EnergyVad();
    const voiced = (pcm: Int16Array): number => [...frames(pcm)].filter((f) => vad.classify(f).voiced).length;
    assert.equal(voiced(silence(500)), 0);
    const talk = await speech('I would like to reschedule my appointment please');
    const n = [...frames(talk)].length;
    assert.ok(voiced(talk) > n * 0.5, `${voiced(talk)} of ${n} speech frames voiced`);
    assert.equal(voiced(noise(1000, 1500)), 0, 'broadband hiss is not voice');
  });

  it('opens a turn on speech and closes it after the configured silence', async () => {
    const ep = new Endpointer({ silenceMs: 400 });
    const vad = new EnergyVad();
    const events: [string, number][] = [];
    let t = 0;
    for (const f of frames(concat(silence(300), await speech('yes please'), silence(1000)))) {
      t += 20;
      const e = ep.feed(vad.classify(f).voiced);
      if (e) events.push([e, t]);
    }
    assert.deepEqual(events.map((e) => e[0]), ['start', 'end']);
    assert.ok(events[0]![1] >= 300 && events[0]![1] < 500, `start at ${events[0]![1]} ms`);
  });
});

describe('voicemail detection (audio only)', function () {
  this.timeout(10_000);

  const verdict = (pcm: Int16Array): string | undefined => {
    const amd = new AnsweringMachineDetector();
    for (const f of frames(pcm)) {
      const v = amd.feed(f);
      if (v) return v;
    }
    return undefined;
  };

  it('a long greeting without pauses is a machine', async () => {
    const greeting = await speech('Hi, you have reached Asha. I cannot take your call right now, please leave your name and number after the tone.');
    assert.equal(verdict(concat(silence(400), greeting, silence(500))), 'machine');
  });

  it('a short hello followed by a pause is a person', async () => {
    assert.equal(verdict(concat(silence(300), await speech('Hello?'), silence(1500))), 'human');
  });

  it('finds the beep after the greeting, not in the speech', async () => {
    const greeting = await speech('Please leave a message after the tone.');
    const beep = new BeepDetector();
    let endedAt = -1;
    let t = 0;
    for (const f of frames(concat(greeting, silence(300), tone(1000, 400), silence(600)))) {
      t += 20;
      if (beep.feed(f) && endedAt < 0) endedAt = t;
    }
    const toneEnd = greeting.length / 8 + 300 + 400;
    assert.ok(endedAt >= toneEnd && endedAt <= toneEnd + 60, `beep end reported at ${endedAt} ms, tone ended at ${toneEnd} ms`);
    const speechOnly = new BeepDetector();
    assert.ok(![...frames(concat(greeting, await speech('Thank you for calling, goodbye.')))].some((f) => speechOnly.feed(f)));
  });
});
