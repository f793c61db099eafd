import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { silentLogger } from '../../core/logger.js';
import type { CallMediaSession } from '../../core/ports/media.js';
import { OfflineEngine } from '../../control-api/platform/llm/offline-engine.js';
import { defaultBlocks } from '../../control-api/features/recipes/blocks/index.js';
import { recipeSchema, type RecipeInput } from '../../control-api/model/recipes/recipe-schema.js';
import type { Conversation } from '../../core/ports/conversation.js';
import { RecipeRun } from '../../control-api/features/recipes/runtime/recipe-run.js';
import type { MediaService } from '../../media/media-service.js';
import { EspeakTts } from '../../media/speech/espeak-tts.js';
import { PocketsphinxStt } from '../../media/speech/pocketsphinx-stt.js';
import { PhoneConversation, type PhoneConversationOptions } from '../../media/voice/phone-conversation.js';
import { frameLevelDb } from '../../media/voice/vad.js';
import { decodeWav } from '../../media/wav/wav.js';

const run = promisify(execFile);

/** A caller session and an agent session on loopback, negotiated with real SDP, talking RTP. */
export async function mediaPair(service: MediaService): Promise<{ caller: CallMediaSession; agent: CallMediaSession }> {
  const caller = await service.offer();
  const answer = await service.answer(caller.localSdp);
  if (!answer.ok) throw new Error(`answer failed: ${answer.message}`);
  const applied = caller.applyAnswer(answer.sdp);
  if (!applied.ok) throw new Error(`applyAnswer failed: ${applied.message}`);
  return { caller, agent: answer.session };
}

/**
 * The production voice pipeline with the offline providers (pocketsphinx, espeak-ng, English) on
 * the agent's media session; the call ends (and the run stops) when `ended` aborts.
 */
export function offlineConversation(
  media: CallMediaSession,
  ended: AbortController,
  options: Partial<Omit<PhoneConversationOptions, 'media' | 'signal'>> & { readonly keywords?: readonly string[] } = {},
): PhoneConversation {
  const { keywords = [], ...rest } = options;
  return new PhoneConversation({
    media,
    stt: new PocketsphinxStt(),
    tts: new EspeakTts(),
    speech: { voice: '', language: 'en-US', sttLanguage: 'en-US', keywords: [...keywords] },
    signal: ended.signal,
    hangup: async () => ended.abort(),
    ...rest,
  });
}

/** The synthetic caller's voice: flite (ARCHITECTURE: recognisable by pocketsphinx on 8 kHz). */
export async function fliteSpeech(text: string, voice?: string, stretch = 1): Promise<Int16Array> {
  const dir = await mkdtemp(join(tmpdir(), 'vap-flite-'));
  try {
    const slower = stretch !== 1 ? ['--setf', `duration_stretch=${stretch}`] : [];
    await run('flite', [...(voice ? ['-voice', voice] : []), ...slower, '-t', text, '-o', join(dir, 'say.wav')]);
    return decodeWav(await readFile(join(dir, 'say.wav')));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Transcribes agent audio offline with a grammar of the sentences the recipe can say: the
 * recogniser must still tell from the audio which of them was spoken.
 */
export async function transcribe(pcm: Int16Array, phrases: readonly string[]): Promise<string> {
  const stream = await new PocketsphinxStt({ phrases }).open({ language: 'en-US', keywords: [], signal: new AbortController().signal });
  for (let i = 0; i < pcm.length; i += 160) stream.push(pcm.subarray(i, i + 160));
  return stream.finish();
}

/**
 * `transcribe` line by line: the audio cut at pauses of `pauseMs` or more (the agent's lines are
 * apart by more than that, its words by less), each piece decoded alone. One decode over a whole
 * call can lose its path in a long stretch and fill it with any phrase; pieces cannot.
 */
export async function transcribeLines(pcm: Int16Array, phrases: readonly string[], pauseMs = 600): Promise<string[]> {
  const pieces: Int16Array[] = [];
  let start = -1;
  let quiet = 0;
  for (let i = 0; i + 160 <= pcm.length; i += 160) {
    const voiced = frameLevelDb(pcm.subarray(i, i + 160)) > -45;
    if (voiced) {
      if (start < 0) start = i;
      quiet = 0;
    } else if (start >= 0 && (quiet += 20) >= pauseMs) {
      pieces.push(pcm.subarray(Math.max(0, start - 1600), i));
      start = -1;
    }
  }
  if (start >= 0) pieces.push(pcm.subarray(Math.max(0, start - 1600)));
  const lines: string[] = [];
  for (const piece of pieces) lines.push(await transcribe(piece, phrases));
  return lines;
}

/** The far end of the call: hears the agent (timestamped frames) and speaks PCM into the call. */
export class FarEnd {
  readonly heard: { at: number; samples: Int16Array }[] = [];
  private stopped = false;

  constructor(readonly session: CallMediaSession) {
    void (async () => {
      for await (const frame of session.input) {
        if (this.stopped) break;
        this.heard.push({ at: performance.now(), samples: frame.samples.slice() });
      }
    })();
  }

  stop(): void {
    this.stopped = true;
  }

  /** Agent audio heard from `from` (ms timestamp) on, as one PCM array. */
  audioSince(from = 0): Int16Array {
    const frames = this.heard.filter((f) => f.at >= from);
    const out = new Int16Array(frames.length * 160);
    frames.forEach((f, i) => out.set(f.samples, i * 160));
    return out;
  }

  /** Milliseconds of leading silence in `pcm` (where a caller recording really starts speaking). */
  static onsetMs(pcm: Int16Array): number {
    for (let i = 0; i + 160 <= pcm.length; i += 160) if (frameLevelDb(pcm.subarray(i, i + 160)) > -45) return i / 8;
    return 0;
  }

  lastVoicedAt(): number {
    for (let i = this.heard.length - 1; i >= 0; i--) if (frameLevelDb(this.heard[i]!.samples) > -45) return this.heard[i]!.at;
    return -1;
  }

  /** Resolves once the agent has spoken and then been quiet for `quietMs`. */
  async agentFinished(quietMs = 800, timeoutMs = 30_000): Promise<void> {
    const start = performance.now();
    for (;;) {
      const last = this.lastVoicedAt();
      if (last > 0 && performance.now() - last >= quietMs) return;
      if (performance.now() - start > timeoutMs) throw new Error('the agent never finished speaking');
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Resolves once the agent's audio is heard. */
  async agentSpeaking(timeoutMs = 30_000): Promise<number> {
    const start = performance.now();
    for (;;) {
      const last = this.lastVoicedAt();
      if (last > 0) return last;
      if (performance.now() - start > timeoutMs) throw new Error('the agent never spoke');
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Speaks into the call; resolves when the audio has been sent. */
  async speak(pcm: Int16Array): Promise<void> {
    await this.session.output.play([pcm]);
  }
}

/**
 * A recipe run over any Conversation with the offline engine (no key, no network). The silence
 * timeout is the platform's 8 s unless a test needs it further from what it measures.
 */
export function recipeRun(input: RecipeInput, conversation: Conversation, { language = 'en-US', silenceTimeoutMs = 8000 } = {}): RecipeRun {
  const refuse = async (): Promise<never> => {
    throw new Error('not used by this recipe');
  };
  return new RecipeRun({
    recipe: recipeSchema.parse(input),
    conversation,
    context: { callId: 'voice-test', tenantId: '00000000-0000-4000-8000-000000000001', timezone: 'Asia/Kolkata', direction: 'inbound', language, campaignVariables: {}, now: () => Date.now() },
    services: { engine: new OfflineEngine(), http: { request: refuse }, code: { run: refuse }, webhooks: { send: refuse }, logger: silentLogger, silenceTimeoutMs },
    blocks: defaultBlocks,
  });
}

/** Greeting, a yes/no question, and a Condition on the answer with one closing line per branch. */
export const appointmentRecipe: RecipeInput = {
  name: 'Voice appointment check',
  startBlockId: 'greet',
  blocks: [
    { id: 'greet', type: 'message', settings: { text: 'Hello, this is the clinic calling.' } },
    {
      id: 'question',
      type: 'smartAi',
      settings: {
        prompt: 'Ask whether the caller will attend.\nOpening: Will you attend your appointment tomorrow?\nReprompt: Sorry, will you attend tomorrow?',
        retryLimit: 2,
        intents: [
          { name: 'confirm', description: 'caller says yes and confirms they will attend' },
          { name: 'cancel', description: 'caller says no and wants to cancel' },
        ],
        intentVariable: 'answer',
      },
    },
    { id: 'decide', type: 'condition', settings: { branches: [{ name: 'attending', rules: [{ variable: 'answer', operator: 'equals', value: 'confirm' }] }] } },
    { id: 'bye_yes', type: 'close', settings: { closingScript: 'Wonderful, we will see you tomorrow. Goodbye.', disposition: 'confirmed' } },
    { id: 'bye_no', type: 'close', settings: { closingScript: 'Okay, your appointment is cancelled. Goodbye.', disposition: 'cancelled' } },
  ],
  connections: [
    { from: 'greet', exit: 'next', to: 'question' },
    { from: 'question', exit: 'confirm', to: 'decide' },
    { from: 'question', exit: 'cancel', to: 'decide' },
    { from: 'question', exit: 'fallback', to: 'bye_no' },
    { from: 'decide', exit: 'attending', to: 'bye_yes' },
    { from: 'decide', exit: 'else', to: 'bye_no' },
  ],
};

/** Every sentence the appointment recipe's agent can say (the transcription grammar). */
export const appointmentVocabulary = [
  'hello this is the clinic calling',
  'will you attend your appointment tomorrow',
  'sorry will you attend tomorrow',
  'wonderful we will see you tomorrow',
  'okay your appointment is cancelled',
  'just to check you say no and want to cancel',
  'just to check you say yes and confirm you will attend',
  'goodbye',
];

/** The agent's side (right channel) of a stereo call recording. */
export function agentChannel(file: string): Promise<Int16Array> {
  return recordingChannel(file, 1);
}

/** The caller's side (left channel) of a stereo call recording. */
export function callerChannel(file: string): Promise<Int16Array> {
  return recordingChannel(file, 0);
}

async function recordingChannel(file: string, channel: 0 | 1): Promise<Int16Array> {
  const buf = await readFile(file);
  const data = buf.indexOf('data') + 8;
  const frames = Math.floor((buf.length - data) / 4);
  const out = new Int16Array(frames);
  for (let i = 0; i < frames; i++) out[i] = buf.readInt16LE(data + 4 * i + 2 * channel);
  return out;
}
