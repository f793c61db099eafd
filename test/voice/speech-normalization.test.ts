import assert from 'node:assert/strict';
import { silentLogger } from '../../core/logger.js';
import { OfflineEngine } from '../../control-api/platform/llm/offline-engine.js';
import { defaultBlocks } from '../../control-api/features/recipes/blocks/index.js';
import { recipeSchema } from '../../control-api/model/recipes/recipe-schema.js';
import { RecipeRun } from '../../control-api/features/recipes/runtime/recipe-run.js';
import { MediaService } from '../../media/media-service.js';
import type { SttProvider, TtsProvider, TtsRequest } from '../../media/speech/speech-provider.js';
import { PhoneConversation } from '../../media/voice/phone-conversation.js';
import { mediaPair } from './voice-harness.js';

/** Records the text each line reaches TTS with (after normalisation and pronunciation). */
function recordingTts(spoken: string[]): TtsProvider {
  return {
    name: 'recording',
    async *synthesize({ text }: TtsRequest) {
      spoken.push(text);
      yield new Int16Array(160 * 3).fill(2000);
    },
  };
}

const noStt: SttProvider = {
  name: 'unused',
  open: () => Promise.reject(new Error('the caller does not speak in this test')),
};

/**
 * A block's "Speech normalization" rules (spec: each active rule adds latency) reach the voice
 * pipeline: a SmartAI block runs only the rules it enables; a Message block, which has no such
 * setting, gets the pipeline's default set.
 */
describe('speech normalisation rules from blocks to the voice pipeline', function () {
  this.timeout(20_000);
  let service: MediaService;
  beforeEach(() => {
    service = new MediaService({ bindAddress: '127.0.0.1', portMin: 45400, portMax: 45449 });
  });
  afterEach(async () => {
    await service.close();
  });

  async function speak(rules: string[] | undefined): Promise<string[]> {
    const { agent } = await mediaPair(service);
    const spoken: string[] = [];
    const ended = new AbortController();
    const conversation = new PhoneConversation({
      media: agent,
      stt: noStt,
      tts: recordingTts(spoken),
      speech: { voice: '', language: 'en-IN', sttLanguage: 'en-IN', keywords: [] },
      signal: ended.signal,
      hangup: async () => ended.abort(),
    });
    const run = new RecipeRun({
      recipe: recipeSchema.parse({
        name: 'Bill reminder',
        startBlockId: 'intro',
        blocks: [
          { id: 'intro', type: 'message', settings: { text: 'We called on 2026-12-01.' } },
          {
            id: 'bill',
            type: 'smartAi',
            settings: { prompt: 'Remind about the bill.\nOpening: Your bill of ₹500 is due on 2026-12-03.', retryLimit: 1, ...(rules ? { speechNormalization: rules } : {}) },
          },
        ],
        connections: [{ from: 'intro', exit: 'next', to: 'bill' }],
      }),
      conversation,
      context: { callId: 'norm', tenantId: 't', timezone: 'Asia/Kolkata', direction: 'inbound', language: 'en-IN', campaignVariables: {}, now: () => Date.now() },
      services: {
        engine: new OfflineEngine(),
        http: { request: () => Promise.reject(new Error('unused')) },
        code: { run: () => Promise.reject(new Error('unused')) },
        webhooks: { send: () => Promise.reject(new Error('unused')) },
        logger: silentLogger,
        silenceTimeoutMs: 300,
      },
      blocks: defaultBlocks,
    });
    await run.run(ended.signal);
    return spoken;
  }

  it('a SmartAI block with only "currency" enabled: the amount is spoken in words, the date is left as written', async () => {
    const spoken = await speak(['currency']);
    assert.ok(spoken.some((t) => /five hundred rupees/.test(t) && /2026-12-03/.test(t)), `TTS got: ${spoken.join(' | ')}`);
  });

  it('a SmartAI block with no rules enabled: its text reaches TTS as written', async () => {
    const spoken = await speak([]);
    assert.ok(spoken.some((t) => t.includes('₹500') && t.includes('2026-12-03')), `TTS got: ${spoken.join(' | ')}`);
  });

  it('a Message block (no rules setting) gets every rule: its date is spoken in words', async () => {
    const spoken = await speak(['currency']);
    assert.ok(spoken.some((t) => /the first of December twenty twenty-six/.test(t)), `TTS got: ${spoken.join(' | ')}`);
    assert.ok(!spoken.some((t) => t.includes('2026-12-01')));
  });
});
