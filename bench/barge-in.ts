/**
 * Barge-in stop time over real RTP: how soon the agent's voice stops after the caller starts
 * speaking over it, and which sounds stop it at all, for the three interruption settings a block
 * can have (barge-in alone, Smart Interruption, Caution on noisy lines).
 *
 *   stop time = the agent's line cut (its output queue cleared) - the caller's first voiced packet sent
 *
 * and no voiced agent packet may reach the caller more than 100 ms after the cut (counted as a
 * leak). The caller speaks 1.5-2.5 s into the line, at a random point, so the sound falls on words
 * and on pauses alike.
 *
 * Two MediaSessions on loopback (docs/voice-pipeline.md's production pipeline: pocketsphinx,
 * espeak-ng), the caller's sounds from flite plus a synthetic cough (250 ms of noise). A sound the
 * setting should let pass (a backchannel, a cough under Smart Interruption) counts as right when
 * the agent talks on; words count as right when they stop it.
 *
 *   node --import tsx bench/barge-in.ts [--trials 4]
 */
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { MediaService } from '../media/media-service.js';
import { frameLevelDb } from '../media/voice/vad.js';
import type { TurnSettings } from '../media/voice/phone-conversation.js';
import { FarEnd, fliteSpeech, mediaPair, offlineConversation } from '../test/voice/voice-harness.js';

const args = process.argv.slice(2);
const trials = Number(args[args.indexOf('--trials') + 1] ?? 4) || 4;
const voiced = (samples: Int16Array): boolean => frameLevelDb(samples) > -45;
const line =
  'Let me read the terms of your plan. The interest rate is fixed for the first three years, and after that it follows the bank rate. ' +
  'Payments are due on the fifth of every month, and a late payment carries a fee of two hundred and fifty rupees.';

interface Sound {
  readonly name: string;
  readonly pcm: () => Promise<Int16Array>;
  /** Whether the setting should stop the agent for it. */
  readonly stops: (setting: string) => boolean;
}
const cough = async (): Promise<Int16Array> => Int16Array.from({ length: 2000 }, () => Math.round((Math.random() * 2 - 1) * 6000));
const sounds: Sound[] = [
  { name: '"stop please"', pcm: () => fliteSpeech('stop please'), stops: () => true },
  { name: '"wait, I have a question"', pcm: () => fliteSpeech('wait, I have a question'), stops: () => true },
  { name: '"mm hmm"', pcm: () => fliteSpeech('mm hmm'), stops: (s) => s === 'barge-in' },
  { name: '"uh huh"', pcm: () => fliteSpeech('uh huh'), stops: (s) => s === 'barge-in' },
  { name: 'cough (250 ms noise)', pcm: cough, stops: () => false },
];
const settings: ReadonlyArray<[string, TurnSettings]> = [
  ['barge-in', {}],
  ['smart', { smartInterruption: true }],
  ['caution', { cautionOnNoisyLines: true }],
];

const percentile = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? NaN;

async function trial(service: MediaService, turn: TurnSettings, pcm: Int16Array): Promise<{ stopped: boolean; stopMs?: number; leaked?: boolean }> {
  const { caller, agent } = await mediaPair(service);
  const far = new FarEnd(caller);
  const ended = new AbortController();
  const conversation = offlineConversation(agent, ended, { turn });
  try {
    let resolvedAt = Infinity;
    const saying = conversation.say(line, { bargeIn: true, signal: ended.signal }).then((r) => ((resolvedAt = performance.now()), r));
    await far.agentSpeaking();
    await new Promise((r) => setTimeout(r, 1500 + Math.random() * 1000));
    const onset = performance.now() + FarEnd.onsetMs(pcm);
    await far.speak(pcm);
    // Long enough for any decision on the sound (sustained speech, the recogniser's reading).
    const said = await Promise.race([saying, new Promise<undefined>((r) => setTimeout(() => r(undefined), 4000))]);
    if (!said?.interrupted) return { stopped: false };
    await new Promise((r) => setTimeout(r, 500));
    const leaked = far.heard.some((f) => f.at > resolvedAt + 100 && voiced(f.samples));
    return { stopped: true, stopMs: Math.max(0, resolvedAt - onset), leaked };
  } finally {
    ended.abort();
    far.stop();
    await Promise.allSettled([caller.close(), agent.close()]);
  }
}

const service = new MediaService({ bindAddress: '127.0.0.1', portMin: 46200, portMax: 46399 });
console.log(`barge-in bench: ${trials} trials per sound and setting, load average ${loadavg()[0]?.toFixed(1)}`);
const rows: string[] = [];
for (const [setting, turn] of settings) {
  for (const sound of sounds) {
    const pcm = await sound.pcm();
    const stopTimes: number[] = [];
    let right = 0;
    let leaks = 0;
    for (let i = 0; i < trials; i++) {
      const result = await trial(service, turn, pcm);
      if (result.stopped === sound.stops(setting)) right++;
      if (result.stopped && result.stopMs !== undefined) stopTimes.push(result.stopMs);
      if (result.leaked) leaks++;
      process.stderr.write(`  ${setting} ${sound.name} #${i + 1}: ${result.stopped ? `stopped after ${result.stopMs?.toFixed(0)} ms${result.leaked ? ', agent audio after the cut' : ''}` : 'talked on'}\n`);
    }
    const times = stopTimes.length ? `stop time median ${percentile(stopTimes, 0.5).toFixed(0)} ms, max ${Math.max(...stopTimes).toFixed(0)} ms` : 'never stopped';
    rows.push(`${setting.padEnd(9)} ${sound.name.padEnd(27)} ${sound.stops(setting) ? 'should stop ' : 'should not  '} right ${right}/${trials}, stopped ${stopTimes.length}/${trials}; ${times}${leaks ? `; agent audio after the cut ${leaks}x` : ''}`);
  }
}
await service.close();
console.log(rows.join('\n'));
