import { closeSettingsSchema, type CloseSettings } from '../recipe-schema.js';
import type { BlockModule } from '../runtime/block.js';

/** Close: speaks the closing script (never interrupted) and ends the call with a disposition tag. */
export const closeBlock: BlockModule<CloseSettings> = {
  type: 'close',
  settings: closeSettingsSchema,
  async run({ say, render }, settings) {
    await say(render(settings.closingScript), { bargeIn: false });
    return { end: 'closed', disposition: render(settings.disposition) };
  },
};
