import { closeSettingsSchema, type CloseSettings } from '../recipe-schema.js';
import type { BlockModule } from '../runtime/block.js';

/** A goodbye of the caller's own said over the agent's: the call may end. */
const courtesy = /^(?:(?:ok(?:ay)?|thanks?|thank you|bye|good ?bye|bye bye|yes|yeah|sure|you too|same to you|take care|all ?right|haan|ji|dhanyavaad|shukriya|cheers|have a nice day)[\s,.!]*)+$/i;

/** How long the Close waits for the words of a caller who cut its line short (a turn under way is awaited anyway). */
const saidOverWaitMs = 1_500;

/**
 * Close: speaks the closing script and ends the call with a disposition tag. The caller may cut
 * the line short: words that are not a goodbye of their own ("no wait, the fifth") are heard and
 * handed back to the run (`saidOver`), which returns to the last block that listened instead of
 * ending the call on something the caller is objecting to. A cough or a click gets the rest of
 * the line.
 */
export const closeBlock: BlockModule<CloseSettings> = {
  type: 'close',
  settings: closeSettingsSchema,
  async run({ say, listen, render }, settings) {
    const disposition = render(settings.disposition);
    const said = await say(render(settings.closingScript), { bargeIn: true });
    if (!said.interrupted) return { end: 'closed', disposition };
    const heard = await listen({ timeoutMs: saidOverWaitMs });
    if (heard.kind === 'dtmf' || (heard.kind === 'utterance' && heard.text.trim() && !courtesy.test(heard.text.trim()))) return { end: 'closed', disposition, saidOver: heard };
    if (heard.kind !== 'utterance' || !heard.text.trim()) await say(said.unspoken ?? '', { bargeIn: false });
    return { end: 'closed', disposition };
  },
};
