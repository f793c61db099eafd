import { isProviderError } from '../../llm/chat-provider.js';
import { askSettingsSchema, type AskSettings } from '../recipe-schema.js';
import type { BlockModule } from '../runtime/block.js';
import { conversationLoop } from './conversational-turns.js';

/** Ask: captures its declared variable(s), then leaves through `next`; intents may steer away. */
export const askBlock: BlockModule<AskSettings> = {
  type: 'ask',
  settings: askSettingsSchema,
  async run(ctx, settings) {
    const isDone = (captured: ReadonlySet<string>): boolean => settings.variables.every((v) => captured.has(v.name));
    try {
      return await conversationLoop(ctx, settings, { isDone, doneExit: 'next' });
    } catch (error) {
      if (!isProviderError(error) || ctx.signal.aborted) throw error;
      ctx.warn(`language model failed: ${error.message}`);
      return { exit: 'fallback' };
    }
  },
};
