import { isProviderError } from '../../../platform/llm/chat-provider.js';
import { smartAiSettingsSchema, type SmartAiSettings } from '../../../model/recipes/recipe-schema.js';
import type { BlockModule } from '../runtime/block.js';
import { conversationLoop } from './conversational-turns.js';

/**
 * SmartAI: a multi-turn LLM conversation that leaves through the first detected intent, or
 * through `fallback` when the retry limit is spent or the provider fails (spec: Fallback Node).
 */
export const smartAiBlock: BlockModule<SmartAiSettings> = {
  type: 'smartAi',
  settings: smartAiSettingsSchema,
  async run(ctx, settings) {
    try {
      return await conversationLoop(ctx, settings);
    } catch (error) {
      if (!isProviderError(error) || ctx.signal.aborted) throw error;
      ctx.warn(`language model failed: ${error.message}`);
      return { exit: 'fallback' };
    }
  },
};
