import { isProviderError } from '../../../platform/llm/chat-provider.js';
import { askSettingsSchema, type AskSettings } from '../../../model/recipes/recipe-schema.js';
import type { BlockContext, BlockModule } from '../runtime/block.js';
import { conversationLoop, templatedReplies } from './conversational-turns.js';
import { keypadHint, variableNoun } from './meaning-words.js';

/**
 * The question an Ask speaks when the engine gave no opening (the offline engine without an
 * `Opening:` line, or a model that returned nothing): the prompt's first paragraph that asks
 * something, else one said to the caller, else its `Reprompt:` line, else a question built from
 * the first variable (its own `question`, or "Could you tell me the order number?"), never its
 * description pasted in.
 */
export function askQuestion(ctx: BlockContext, settings: AskSettings): string {
  const prompt = ctx.render(settings.prompt);
  const paragraphs = prompt.split(/\n\s*\n/).map((p) => p.replace(/^\s*(Opening|Reprompt|Reply\s+\w+)\s*:.*$/gm, '').replace(/\s+/g, ' ').trim());
  const plain = paragraphs.find((p) => p.includes('?')) ?? paragraphs.find(addressesCaller);
  if (plain) return plain;
  const reprompt = templatedReplies(prompt).reprompt;
  if (reprompt) return reprompt;
  const first = settings.variables[0];
  if (!first) return 'Could you tell me your answer?';
  return first.question?.trim() || `Could you tell me ${variableNoun(first)}?`;
}

/**
 * A paragraph said to the caller ("Please key in your order number, then press hash."), not an
 * instruction to the agent about them ("Ask for the order number.", "Ask which date the caller
 * would like").
 */
function addressesCaller(paragraph: string): boolean {
  return /\b(you|your|please)\b/i.test(paragraph) && !/\b(the caller|caller's|the customer|the user)\b/i.test(paragraph) && !/^(ask|find out|get|collect|capture|confirm|check)\b/i.test(paragraph);
}

/** Ask: captures its declared variable(s), then leaves through `next`; intents may steer away. */
export const askBlock: BlockModule<AskSettings> = {
  type: 'ask',
  settings: askSettingsSchema,
  async run(ctx, settings) {
    const isDone = (captured: ReadonlySet<string>): boolean => settings.variables.every((v) => captured.has(v.name));
    try {
      return await conversationLoop(ctx, settings, {
        isDone,
        doneExit: 'next',
        openingFallback: (c) => askQuestion(c, settings),
        answersEchoQuestion: true,
        keypadHint: keypadHint(settings.variables, settings.dtmf),
      });
    } catch (error) {
      if (!isProviderError(error) || ctx.signal.aborted) throw error;
      ctx.warn(`language model failed: ${error.message}`);
      return { exit: 'fallback' };
    }
  },
};
