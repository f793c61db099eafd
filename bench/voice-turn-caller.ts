/**
 * What both paths of the voice-turn benchmark share (bench/voice-turn.ts): the null pipeline's
 * fixed-delay fake STT, engine and TTS, the recipe, and the synthetic caller, which talks and
 * listens in 20 ms mu-law payloads over whichever wire it is given (RTP or a media stream).
 */
import { performance } from 'node:perf_hooks';
import type { AgentEngine, TurnRequest, TurnResult } from '../control-api/platform/llm/agent-engine.js';
import { silentLogger } from '../core/logger.js';
import type { CallMediaSession } from '../core/ports/media.js';
import { defaultBlocks } from '../control-api/features/recipes/blocks/index.js';
import { recipeSchema } from '../control-api/model/recipes/recipe-schema.js';
import { RecipeRun } from '../control-api/features/recipes/runtime/recipe-run.js';
import { pcmu } from '../media/codecs/g711.js';
import type { SttProvider, SttStream, TtsProvider, TtsRequest } from '../media/speech/speech-provider.js';
import { PhoneConversation } from '../media/voice/phone-conversation.js';

export const ENDPOINT_MS = 500;
export const STT_MS = 40;
export const LLM_MS = 80;
export const TTS_MS = 30;
export const TALK_FRAMES = 20; // 400 ms of "speech" per caller turn
export const REPLY_MS = 300;
/** The aim for the wire-to-wire overhead at p95. */
export const AIM_MS = 20;

export const delay = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      resolve();
    }, { once: true });
  });

export const fakeStt: SttProvider = {
  name: 'fixed-delay',
  async open(): Promise<SttStream> {
    return { push() {}, onTranscript() {}, abort() {}, finish: async () => (await delay(STT_MS), 'hello there') };
  },
};

const replyAudio = Int16Array.from({ length: (REPLY_MS * 8) }, (_, i) => Math.round(7000 * Math.sin((2 * Math.PI * 440 * i) / 8000)));
export const fakeTts: TtsProvider = {
  name: 'fixed-delay',
  async *synthesize({ signal }: TtsRequest) {
    await delay(TTS_MS, signal);
    for (let i = 0; i < replyAudio.length && !signal.aborted; i += 160) yield replyAudio.subarray(i, i + 160);
  },
};

export const fakeEngine: AgentEngine = {
  name: 'fixed-delay',
  async turn(request: TurnRequest): Promise<TurnResult> {
    if (request.userText === undefined) return { reply: '', values: {} };
    await delay(LLM_MS);
    return { reply: 'Sure.', values: {} };
  },
};

export const recipe = recipeSchema.parse({
  name: 'Null pipeline',
  startBlockId: 'chat',
  blocks: [{ id: 'chat', type: 'smartAi', settings: { prompt: 'Chat.', retryLimit: 20, nudge: false } }],
  connections: [{ from: 'chat', exit: 'fallback', to: 'chat' }],
});

/** A vowel-like caller sound: harmonics of 140 Hz (low zero-crossing rate, clearly voiced). */
export function voicedFrame(n: number): Buffer {
  const pcm = new Int16Array(160);
  for (let i = 0; i < 160; i++) {
    const t = (n * 160 + i) / 8000;
    pcm[i] = Math.round(3000 * (Math.sin(2 * Math.PI * 140 * t) + 0.6 * Math.sin(2 * Math.PI * 280 * t) + 0.4 * Math.sin(2 * Math.PI * 420 * t)));
  }
  const out = Buffer.alloc(160);
  pcmu.encode(pcm, out);
  return out;
}
export const VOICED = Array.from({ length: TALK_FRAMES }, (_, n) => voicedFrame(n));
export const SILENT = Buffer.alloc(160, pcmu.silenceByte);

export type CallerState = 'pause' | 'talking' | 'waiting' | 'hearing';

/** Moments on the agent side of one conversation, read by its caller to split the overhead. */
export interface Probe {
  endedAt: number;
  firstWriteAt: number;
}

export interface Breakdown {
  /** Last voiced packet sent -> endpoint decided, minus the endpointing silence (jitter hold + tick). */
  input: number[];
  /** First reply audio queued -> its first packet received (tick alignment + UDP). */
  output: number[];
}

export class Caller {
  state: CallerState = 'pause';
  private frame = 0;
  private pauseUntil: number;
  private lastVoicedAt = 0;
  private lastHeardAt = 0;
  turns = 0;
  constructor(
    /** Sends one 20 ms mu-law payload to the agent (as an RTP packet, or as a media stream frame). */
    private readonly wire: (payload: Buffer) => void,
    private readonly samples: number[],
    private readonly probe: Probe,
    private readonly breakdown: Breakdown,
    private readonly maxTurns: number,
    startDelayMs: number,
  ) {
    this.pauseUntil = performance.now() + startDelayMs;
  }

  get done(): boolean {
    return this.turns >= this.maxTurns;
  }

  tick(now: number): void {
    let payload: Buffer = SILENT;
    if (this.state === 'pause' && now >= this.pauseUntil && !this.done) {
      this.state = 'talking';
      this.frame = 0;
    }
    if (this.state === 'talking') {
      payload = VOICED[this.frame++]!;
      if (this.frame === TALK_FRAMES) this.state = 'waiting';
    }
    // The SmartAI block's last allowed unmatched turn is silent by design (then it re-enters):
    // a turn with no reply within 3 s is skipped, not measured.
    if (this.state === 'waiting' && now - this.lastVoicedAt > 3000) {
      this.turns++;
      this.state = 'pause';
      this.pauseUntil = now + 200;
    }
    if (this.state === 'hearing' && now - this.lastHeardAt > 200) {
      this.state = 'pause';
      this.pauseUntil = now + 200 + Math.random() * 400;
    }
    const voiced = payload !== SILENT;
    this.wire(payload);
    if (voiced) this.lastVoicedAt = performance.now();
  }

  /** Agent audio received: 20 ms of mu-law. */
  onAudio(payload: Buffer): void {
    if (payload.length < 160) return;
    let audible = false;
    for (let i = 0; i < payload.length; i += 8) {
      if (Math.abs(pcmu.decode(payload.subarray(i, i + 1))[0]!) > 1000) {
        audible = true;
        break;
      }
    }
    if (!audible) return;
    const now = performance.now();
    if (this.state === 'waiting') {
      this.samples.push(now - this.lastVoicedAt - ENDPOINT_MS - STT_MS - LLM_MS - TTS_MS);
      if (this.probe.endedAt > 0 && this.probe.firstWriteAt > 0) {
        this.breakdown.input.push(this.probe.endedAt - this.lastVoicedAt - ENDPOINT_MS);
        this.breakdown.output.push(now - this.probe.firstWriteAt);
      }
      this.probe.endedAt = 0;
      this.probe.firstWriteAt = 0;
      this.turns++;
      this.state = 'hearing';
    }
    this.lastHeardAt = now;
  }
}


/** Agent-side moments of one conversation's turns, and the processing time per turn. */
export interface AgentProbes {
  readonly probe: Probe;
  readonly processing: number[];
}

/**
 * The production voice pipeline on one call's media session (either path): PhoneConversation
 * with the fixed-delay fakes and a RecipeRun with the SmartAI block, probed at the end of each
 * caller turn and at the first agent audio queued for the reply.
 */
export function runNullConversation(media: CallMediaSession, index: number, probes: AgentProbes, signal: AbortSignal): void {
  let endedAt = 0;
  const output = media.output;
  const write = output.write.bind(output);
  output.write = (pcm: Int16Array) => {
    if (endedAt > 0) {
      const now = performance.now();
      probes.processing.push(now - endedAt - STT_MS - LLM_MS - TTS_MS);
      probes.probe.endedAt = endedAt;
      probes.probe.firstWriteAt = now;
      endedAt = 0;
    }
    write(pcm);
  };
  const conversation = new PhoneConversation({
    media,
    stt: fakeStt,
    tts: fakeTts,
    speech: { voice: 'x', language: 'en-US', sttLanguage: 'en-US', keywords: [] },
    turn: { endpointSilenceMs: ENDPOINT_MS },
    signal,
    onTurnEvent: (event, at) => {
      if (event === 'callerEnded') endedAt = at;
    },
  });
  const run = new RecipeRun({
    recipe,
    conversation,
    context: { callId: `bench-${index}`, tenantId: 't', timezone: 'UTC', direction: 'inbound', campaignVariables: {}, now: () => Date.now() },
    services: { engine: fakeEngine, http: { request: async () => ({ status: 500, headers: {}, body: '' }) }, code: { run: async () => ({ ok: false, error: 'n/a', kind: 'runtime' }) }, webhooks: { send: async () => 500 }, logger: silentLogger, silenceTimeoutMs: 60_000 },
    blocks: defaultBlocks,
  });
  void run.run(signal);
}
