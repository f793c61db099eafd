import { codeSettingsSchema, type CodeSettings } from '../../../model/recipes/recipe-schema.js';
import type { BlockModule } from '../runtime/block.js';
import { CallEndedError } from '../../../../core/ports/conversation.js';

/**
 * Code: runs `main(context, variables, plugins)` in the QuickJS sandbox. Variables the code
 * changed or added are written back; a syntax error, a throw or a timeout leaves through
 * `ifFails` (spec: Code block routing).
 */
export const codeBlock: BlockModule<CodeSettings> = {
  type: 'code',
  settings: codeSettingsSchema,
  async run(ctx, settings, signal) {
    const before = ctx.variables();
    const result = await ctx.services.code.run({
      source: settings.source,
      context: {
        callId: ctx.call.callId,
        tenantId: ctx.call.tenantId,
        callerNumber: ctx.call.callerNumber ?? '',
        calledNumber: ctx.call.calledNumber ?? '',
        direction: ctx.call.direction,
        timezone: ctx.call.timezone,
        language: ctx.call.language ?? '',
        blockId: ctx.blockId,
      },
      variables: before,
      timeoutMs: settings.timeoutMs,
      signal,
      now: ctx.call.now(),
      today: ctx.today(),
    });
    if (!result.ok) {
      if (result.kind === 'cancelled') throw new CallEndedError();
      ctx.warn(`code block ${result.kind} error: ${result.error}`);
      return { exit: 'ifFails' };
    }
    for (const [name, value] of Object.entries(result.variables)) {
      if (JSON.stringify(before[name]) !== JSON.stringify(value)) ctx.setVariable(name, value);
    }
    return { exit: 'ifSuccess' };
  },
};
