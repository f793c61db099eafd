import { closeSettingsSchema, type CloseSettings } from '../../../model/recipes/recipe-schema.js';
import type { BlockContext, BlockModule } from '../runtime/block.js';
import type { Heard } from '../../../../core/ports/conversation.js';

/** A goodbye of the caller's own said over the agent's: the call may end. */
const courtesy = /^(?:(?:ok(?:ay)?|thanks?|thank you|bye|good ?bye|bye bye|yes|yeah|sure|you too|same to you|take care|all ?right|haan|ji|dhanyavaad|shukriya|cheers|have a nice day)[\s,.!]*)+$/i;

/** How long the Close waits for the words of a caller who cut its line short (a turn under way is awaited anyway). */
const saidOverWaitMs = 1_500;
/** A pause this long after them ends what the caller says over the line. */
const continuationMs = 1_200;

/**
 * Close: speaks the closing script and ends the call with a disposition tag. The caller may cut
 * the line short (when the run can go back, `canReopen`): words that are not a goodbye of their
 * own ("no wait, the fifth") are heard and handed back to the run (`saidOver`), which returns to
 * the last block that listened instead of ending the call on something the caller is objecting
 * to. A cough or a click gets the rest of the line.
 */
export const closeBlock: BlockModule<CloseSettings> = {
  type: 'close',
  settings: closeSettingsSchema,
  async run(ctx, settings) {
    const disposition = ctx.render(settings.disposition);
    // With no block to go back to (none listened, or the call already went back once) the line is
    // said whole: words over it could change nothing.
    const said = await ctx.say(ctx.render(settings.closingScript), { bargeIn: ctx.canReopen !== false });
    if (!said.interrupted) return { end: 'closed', disposition };
    const heard = await wordsSaidOver(ctx);
    if (heard.kind === 'dtmf' || (heard.kind === 'utterance' && heard.text.trim() && !courtesy.test(heard.text.trim()))) {
      return { end: 'closed', disposition, saidOver: heard, ...(said.unspoken ? { unspoken: said.unspoken } : {}) };
    }
    if (heard.kind !== 'utterance' || !heard.text.trim()) await ctx.say(said.unspoken ?? '', { bargeIn: false });
    return { end: 'closed', disposition };
  },
};

/**
 * What the caller says over the line, as one answer. A turn that cuts the agent off ends at its
 * first short pause (docs/voice-pipeline.md, turn-taking), so "no, | the fifth of December"
 * arrives as two turns; the pieces that follow each other without a longer pause are joined.
 */
async function wordsSaidOver(ctx: BlockContext): Promise<Heard> {
  let heard = await ctx.listen({ timeoutMs: saidOverWaitMs });
  for (;;) {
    if (heard.kind !== 'utterance') return heard;
    const more = await ctx.listen({ timeoutMs: continuationMs });
    if (more.kind === 'silence') return heard;
    if (more.kind === 'dtmf') return more;
    heard = joined(heard, more);
  }
}

/** Two pieces of one answer: their words in order, the lower confidence, the meaning the later piece heard (else the earlier's). */
function joined(a: Extract<Heard, { kind: 'utterance' }>, b: Extract<Heard, { kind: 'utterance' }>): Heard {
  const confidences = [a.confidence, b.confidence].filter((c): c is number => c !== undefined);
  const meaning = b.meaning || a.meaning || (b.meaning ?? a.meaning);
  return {
    kind: 'utterance',
    text: `${a.text} ${b.text}`.trim(),
    ...(confidences.length > 0 ? { confidence: Math.min(...confidences) } : {}),
    ...(meaning !== undefined ? { meaning } : {}),
  };
}
