import assert from 'node:assert/strict';
import { pcmu } from '../codecs/g711.js';
import { EspeakTts } from '../speech/espeak-tts.js';
import { waitForGreetingEnd } from './call-start.js';
import { Endpointer, EnergyVad } from './vad.js';
import { AnsweringMachineDetector, BeepDetector, GreetingEndWatch, type AmdDecision } from './voicemail-detector.js';

/** espeak-ng speech with its leading and trailing silence cut, so the pauses a test puts in are exact. */
async function speech(text: string, voice = ''): Promise<Int16Array> {
  const parts: number[] = [];
  for await (const c of new EspeakTts().synthesize({ text, voice, language: 'en-US', signal: new AbortController().signal })) parts.push(...c);
  const pcm = Int16Array.from(parts);
  const loud = (i: number): boolean => Math.abs(pcm[i]!) > 300;
  let from = 0;
  while (from < pcm.length && !loud(from)) from++;
  let to = pcm.length;
  while (to > from && !loud(to - 1)) to--;
  return pcm.slice(from, to);
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
const power = (pcm: Int16Array): number => pcm.reduce((n, x) => n + x * x, 0) / Math.max(1, pcm.length);
/** A seeded generator, so a noisy case is the same on every run. */
function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}
/** `pcm` with Gaussian white noise `snrDb` below the power of its `signal` samples, through G.711 mu-law (the call's codec). */
function noisyLine(pcm: Int16Array, signal: Int16Array, snrDb: number, seed = 7): Int16Array {
  const random = seeded(seed);
  const sigma = Math.sqrt(power(signal) / 10 ** (snrDb / 10));
  const mixed = Int16Array.from(pcm, (x) => Math.max(-32768, Math.min(32767, Math.round(x + sigma * Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random())))));
  const bytes = new Uint8Array(mixed.length);
  pcmu.encode(mixed, bytes);
  return pcmu.decode(bytes);
}
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
  this.timeout(20_000);

  const decide = (pcm: Int16Array): AmdDecision | undefined => {
    const amd = new AnsweringMachineDetector();
    for (const f of frames(pcm)) {
      const d = amd.feed(f);
      if (d) return d;
    }
    return undefined;
  };

  it('a long greeting without pauses is a machine once it runs past a person\'s longest opening', async () => {
    const greeting = await speech('Hi, you have reached Asha. I cannot take your call right now, please leave your name and number after the tone, and I will call you back as soon as I can.');
    const d = decide(concat(silence(400), greeting, silence(500)));
    assert.equal(d?.verdict, 'machine');
    assert.equal(d.reason, 'greeting-span');
    // Generous: the bench measures the time; here only that it comes while the greeting is read.
    assert.ok(d.afterMs < 400 + greeting.length / 8, `decided after ${d.afterMs} ms`);
  });

  it('a live answer that ends in a question is a person, however long its opening ("Hi, this is Priya ... How can I help you?")', async () => {
    for (const voice of ['', 'en-us+m3']) {
      const answer = await speech('Hi, this is Priya from the accounts team. How can I help you?', voice);
      const d = decide(concat(silence(300), answer, silence(3000)));
      assert.equal(d?.verdict, 'human', `${voice || 'default voice'}: ${JSON.stringify(d)} (answer ${answer.length / 8} ms)`);
      assert.equal(d.reason, 'waiting-after-answer');
      assert.ok(d.afterMs >= 300 + answer.length / 8, `decided after ${d.afterMs} ms, after the question, not before it`);
    }
  });

  it('a noisy greeting whose beep is under line noise (20 dB below the speech, G.711) is a machine, and the beep is still heard', async () => {
    const greeting = await speech('Hello, you have reached Vikram. Please leave a message after the tone.');
    // A beep 18 dB quieter than the voice: 2 dB above the noise.
    const beep = tone(1400, 400, Math.sqrt((2 * power(greeting)) / 10 ** 1.8));
    const line = noisyLine(concat(silence(300), greeting, silence(300), beep, silence(1500)), greeting, 20);
    const d = decide(line);
    assert.equal(d?.verdict, 'machine', JSON.stringify(d));
    const beepEnd = 300 + greeting.length / 8 + 300 + 400;
    const watch = new GreetingEndWatch();
    let ready: string | undefined;
    let at = 0;
    for (const f of frames(line)) {
      at += 20;
      watch.feed(f);
      if ((ready = watch.state)) break;
    }
    assert.equal(ready, 'beep', `ready: ${ready} at ${at} ms`);
    assert.ok(at >= beepEnd && at <= beepEnd + 100, `ready at ${at} ms, the beep ended at ${beepEnd} ms`);
  });

  it('a short hello followed by a pause is a person', async () => {
    assert.deepEqual(decide(concat(silence(300), await speech('Hello?'), silence(2500)))?.verdict, 'human');
  });

  it('a greeting that opens with "Hello," and a pause of up to 900 ms is a machine, not a person', async () => {
    // The case length rules miss: the pause after "Hello," looks like a person waiting.
    const rest = await speech('you have reached the Sharma family. We cannot take your call right now, please leave a message after the tone.');
    for (const pauseMs of [500, 750, 900]) {
      const d = decide(concat(silence(200), await speech('Hello,'), silence(pauseMs), rest, silence(500)));
      assert.equal(d?.verdict, 'machine', `pause ${pauseMs} ms: ${JSON.stringify(d)}`);
      assert.equal(d.reason, 'greeting-span');
    }
  });

  it('"Hello? ... Hello?" with a person waiting in between is a person, decided in the first wait', async () => {
    const hello = await speech('Hello?');
    const d = decide(concat(silence(300), hello, silence(1500), hello, silence(2000)));
    assert.equal(d?.verdict, 'human');
    assert.ok(d.afterMs < 300 + hello.length / 8 + 1500, `decided after ${d.afterMs} ms, before the second hello`);
  });

  it('a beep with no greeting is a machine, at any pitch, while the beep still sounds', () => {
    for (const hz of [440, 850, 1000, 1400]) {
      const d = decide(concat(silence(800), tone(hz, 500), silence(1000)));
      assert.equal(d?.verdict, 'machine', `${hz} Hz`);
      assert.equal(d.reason, 'beep');
      assert.ok(d.afterMs <= 800 + 260, `${hz} Hz: decided after ${d.afterMs} ms`);
    }
  });

  it('nothing heard is unknown, never a machine (and never a person it did not hear)', () => {
    assert.deepEqual(decide(concat(silence(6000))), { verdict: 'unknown', reason: 'silence', afterMs: 5000 });
    assert.equal(decide(noise(6000, 1500))?.verdict, 'unknown');
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

  it('finds beeps of 400-2000 Hz under white noise at 0 dB SNR after G.711, and none in noisy speech', async () => {
    for (const hz of [400, 700, 1000, 1400, 1800, 2000]) {
      const beep = tone(hz, 300, 3000);
      const beepDetector = new BeepDetector();
      let held = 0;
      for (const f of frames(noisyLine(concat(silence(500), beep, silence(500)), beep, 0, hz))) {
        beepDetector.feed(f);
        held = Math.max(held, beepDetector.toneMs);
      }
      assert.ok(held >= 200, `${hz} Hz: tone held ${held} ms`);
    }
    const talk = await speech('Hello, who is this? I was not expecting a call at this hour, is everything all right?');
    const speechOnly = new BeepDetector();
    let longest = 0;
    for (const f of frames(noisyLine(talk, talk, 20))) {
      speechOnly.feed(f);
      longest = Math.max(longest, speechOnly.toneMs);
    }
    assert.ok(longest < 200, `a tone of ${longest} ms found in speech`);
  });
});

describe('when a machine is ready to record (GreetingEndWatch)', function () {
  this.timeout(10_000);

  const readyAt = (pcm: Int16Array, watch = new GreetingEndWatch()): { state: string; at: number } | undefined => {
    let t = 0;
    for (const f of frames(pcm)) {
      t += 20;
      watch.feed(f);
      if (watch.state) return { state: watch.state, at: t };
    }
    return undefined;
  };

  it('at the end of the beep that follows the greeting', async () => {
    const greeting = await speech('Hello, you have reached Ravi. Please leave a message.');
    const toneEnd = greeting.length / 8 + 400 + 500;
    const ready = readyAt(concat(greeting, silence(400), tone(850, 500), silence(3000)));
    assert.equal(ready?.state, 'beep');
    assert.ok(ready.at >= toneEnd && ready.at <= toneEnd + 60, `ready at ${ready.at} ms, beep ended at ${toneEnd} ms`);
  });

  it('without a beep: once the greeting has been followed by 2.5 s of silence, not in its pauses', async () => {
    const greeting = concat(await speech('Hello,'), silence(900), await speech('you have reached Ravi. Please leave a message.'));
    const ready = readyAt(concat(silence(300), greeting, silence(4000)));
    assert.equal(ready?.state, 'silence');
    const end = 300 + greeting.length / 8;
    // The VAD hears the greeting's last, quiet syllable end a little early.
    assert.ok(ready.at >= end + 2300 && ready.at <= end + 2700, `ready at ${ready.at} ms, greeting ended at ${end} ms`);
  });

  it('waitForGreetingEnd gives up after maxWaitMs of audio when the greeting never ends (bounded)', async () => {
    const taps = new Set<(samples: Int16Array) => void>();
    const audio = { tap: (l: (samples: Int16Array) => void) => (taps.add(l), () => taps.delete(l)) };
    const phrase = concat(await speech('Thank you for calling, all our lines are busy, please stay on the line.'), silence(500));
    const waiting = waitForGreetingEnd(audio, new AbortController().signal, { maxWaitMs: 5000 });
    let fed = 0;
    let outcome: string | undefined;
    void waiting.then((o) => (outcome = o));
    for (let i = 0; i < 4 && outcome === undefined; i++) {
      for (const f of frames(phrase)) {
        for (const l of [...taps]) l(f);
        fed += 20;
      }
      await Promise.resolve();
    }
    assert.equal(await waiting, 'timeout');
    assert.ok(fed >= 5000, `gave up after ${fed} ms of audio`);
    assert.equal(taps.size, 0, 'untapped');
  });
});
