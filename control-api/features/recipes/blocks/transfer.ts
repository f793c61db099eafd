import { transferSettingsSchema, type TransferSettings } from '../../../model/recipes/recipe-schema.js';
import type { BlockModule } from '../runtime/block.js';

/**
 * Transfer: tells the caller (bridge message), then asks the conversation (the gateway, on a
 * phone call) to bridge to the SIP URI or E.164 number. Busy, no answer or a refusal leaves
 * through `failed` so the recipe can apologise or take a message.
 */
export const transferBlock: BlockModule<TransferSettings> = {
  type: 'transfer',
  settings: transferSettingsSchema,
  async run(ctx, settings) {
    const bridge = ctx.render(settings.bridgeMessage);
    await ctx.say(bridge, { bargeIn: false });
    const result = await ctx.transfer(settings.target, bridge);
    if (result.ok) return { end: 'transferred', target: settings.target };
    ctx.warn(`transfer to ${settings.target} failed: ${result.reason}`);
    return { exit: 'failed' };
  },
};
