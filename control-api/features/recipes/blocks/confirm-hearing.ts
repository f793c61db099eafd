import { extractBoolean } from '../../../platform/llm/extract.js';
import type { BlockContext, BlockSayOptions } from '../runtime/block.js';
import type { Heard } from '../../../../core/ports/conversation.js';
import { isPlainAnswer } from './hearing-doubt.js';

/**
 * "Just to check: ...?" before a block acts on a doubtful hearing (the question says what the
 * block would do, in meaning-words.ts). A plain yes confirms, and so does a yes a grammar
 * heard with no other meaning, said with confidence; a plain no, a silence or a doubtful answer
 * does not (the block asks again, never guesses); anything else said with confidence is returned
 * as the caller's next answer (callers often repeat or correct themselves instead of saying yes).
 * The question can always be interrupted: the caller's "yes" often starts before it ends.
 */
export async function confirmHearing(
  ctx: BlockContext,
  question: string,
  heard: string,
  confidence: number | undefined,
  sayOptions: BlockSayOptions,
  listenOptions: { readonly timeoutMs?: number } | undefined,
  thresholds: { readonly confirmBelowConfidence: number; readonly rejectBelowConfidence: number },
): Promise<'yes' | 'no' | Heard> {
  ctx.note({ kind: 'confirm', heard, ...(confidence !== undefined ? { confidence } : {}) });
  await ctx.say(question, { ...sayOptions, bargeIn: true });
  const answer = await ctx.listen(listenOptions);
  if (answer.kind === 'silence') return deny(ctx, 'silence');
  if (answer.kind === 'dtmf') return answer;
  const sure = answer.confidence === undefined || answer.confidence >= thresholds.confirmBelowConfidence;
  const heardAtAll = answer.confidence === undefined || answer.confidence >= thresholds.rejectBelowConfidence;
  const plain = isPlainAnswer(answer.text);
  const polarity = extractBoolean(answer.text);
  // A grammar that heard a yes and no other meaning: a yes in the caller's own words ("yes, I
  // will be at home tomorrow": people confirm by saying their answer again).
  const heardYes = answer.meaning === 'yes';
  if (((plain && polarity === true) || heardYes) && sure) {
    ctx.note({ kind: 'confirmed', heard: answer.text });
    return 'yes';
  }
  if (((plain && polarity === false) || answer.meaning === 'no') && heardAtAll) return deny(ctx, undefined, answer.text);
  // Not a plain yes/no: the block treats it as the caller's next answer (and decides on it afresh).
  if (heardAtAll && answer.text.trim() && !plain) return answer;
  return deny(ctx, 'lowConfidence', answer.text);
}

function deny(ctx: BlockContext, reason: 'silence' | 'lowConfidence' | undefined, heard?: string): 'no' {
  ctx.note({ kind: 'denied', ...(reason ? { reason } : {}), ...(heard ? { heard } : {}) });
  return 'no';
}
