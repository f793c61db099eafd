import { messageSettingsSchema, type MessageSettings } from '../../../model/recipes/recipe-schema.js';
import type { BlockModule } from '../runtime/block.js';

/** Message: speaks its text and continues at once, without waiting for the caller (spec). */
export const messageBlock: BlockModule<MessageSettings> = {
  type: 'message',
  settings: messageSettingsSchema,
  async run({ say, render }, settings) {
    await say(render(settings.text), { bargeIn: false });
    return { exit: 'next' };
  },
};
