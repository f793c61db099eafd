import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { systemClock } from '../../core/clock.js';
import { silentLogger } from '../../core/logger.js';
import type { AudioFrame, CallMediaSession } from '../../core/ports/media.js';
import type { SttProvider, SttStream } from '../speech/speech-provider.js';
import { Hearing, type HearingHooks } from './hearing.js';

/** 20 ms at 8 kHz: a loud tone (speech to the VAD) or silence, with a 16 kHz original when `wide`. */
function frame(loud: boolean, wide: boolean): AudioFrame {
  const samples = Int16Array.from({ length: 160 }, (_, i) => (loud ? Math.round(9000 * Math.sin(i / 2)) : 0));
  const wideband = Int16Array.from({ length: 320 }, (_, i) => (loud ? Math.round(7000 * Math.sin((2 * Math.PI * 6000 * i) / 16000)) : 0));
  return { samples, ...(wide ? { wideband } : {}) } as AudioFrame;
}

/** What the recogniser was given, push by push. */
function recordingStt(): { stt: SttProvider; pushes: { samples: number; wideband?: number }[] } {
  const pushes: { samples: number; wideband?: number }[] = [];
  const stream: SttStream = {
    push: (samples, wideband) => void pushes.push({ samples: samples.length, ...(wideband ? { wideband: wideband.length } : {}) }),
    finish: async () => '',
    onTranscript: () => undefined,
    abort: () => undefined,
  };
  return { stt: { name: 'recording', open: async () => stream }, pushes };
}

const hooks: HearingHooks = { onTurnStart: () => undefined, onTurnAudio: () => undefined, onTurnEnd: () => undefined, onRecognition: () => undefined, onKey: () => undefined, onKeypadEntry: () => undefined };

async function hear(wide: boolean): Promise<{ samples: number; wideband?: number }[]> {
  const { stt, pushes } = recordingStt();
  const frames = [...Array.from({ length: 10 }, () => frame(false, wide)), ...Array.from({ length: 30 }, () => frame(true, wide)), ...Array.from({ length: 50 }, () => frame(false, wide))];
  async function* input(): AsyncGenerator<AudioFrame> {
    for (const f of frames) yield f;
  }
  const media = Object.assign(new EventEmitter(), {}) as unknown as CallMediaSession;
  const hearing = new Hearing({ media, input: input(), stt, language: 'en-US', keywords: [], detection: {}, signal: new AbortController().signal, clock: systemClock, logger: silentLogger, hooks });
  await hearing.done;
  await new Promise((r) => setTimeout(r, 10));
  return pushes;
}

describe('hearing: the audio a turn gives the recogniser', () => {
  it("a wideband (G.722) call's frames reach the recogniser with their 16 kHz original, pre-roll included", async () => {
    const pushes = await hear(true);
    assert.ok(pushes.length >= 30, `${pushes.length} frames pushed`);
    assert.ok(pushes.every((p) => p.samples === 160 && p.wideband === 320), JSON.stringify(pushes.slice(0, 3)));
  });

  it('a narrowband call pushes 8 kHz frames only', async () => {
    const pushes = await hear(false);
    assert.ok(pushes.length >= 30);
    assert.ok(pushes.every((p) => p.samples === 160 && p.wideband === undefined));
  });
});

describe('hearing: keys', () => {
  it("a '#' pressed right after an entry that ended at its last digit reaches neither barge-in nor the keypad", async () => {
    const keys: string[] = [];
    const entries: string[] = [];
    const media = Object.assign(new EventEmitter(), {}) as unknown as CallMediaSession & EventEmitter;
    const stopped = new AbortController();
    async function* input(): AsyncGenerator<AudioFrame> {
      while (!stopped.signal.aborted) yield await new Promise<AudioFrame>((r) => setTimeout(() => r(frame(false, false)), 20));
    }
    const keyHooks: HearingHooks = { ...hooks, onKey: (digit) => void keys.push(digit), onKeypadEntry: (digits) => void entries.push(digits) };
    const hearing = new Hearing({ media, input: input(), stt: recordingStt().stt, language: 'en-US', keywords: [], detection: {}, signal: stopped.signal, clock: systemClock, logger: silentLogger, hooks: keyHooks });
    hearing.expect({ phrases: [], values: ['digits'], digitCount: 6, dtmf: { maxDigits: 6, terminator: '#', interDigitTimeoutMs: 3000 } });
    for (const digit of '123456#') media.emit('dtmf', { digit });
    // A '#' later on is a key again (a terminator alone: an empty entry).
    for (const digit of '12#') media.emit('dtmf', { digit });
    stopped.abort();
    await hearing.done;
    assert.deepEqual(keys, ['1', '2', '3', '4', '5', '6', '1', '2', '#']);
    assert.deepEqual(entries, ['123456', '12']);
  });
});

