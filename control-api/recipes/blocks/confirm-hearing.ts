import { dateWords, extractBoolean, normalize, tokens } from '../../llm/extract.js';
import type { BlockContext, BlockSayOptions } from '../runtime/block.js';
import type { Heard } from '../runtime/conversation.js';
import type { SmartAiSettings } from '../recipe-schema.js';
import { spacedName } from './listen-expectation.js';

/**
 * What "Did you say ...?" repeats: what the block would act on, in the caller's words where the
 * recipe gives them. A yes/no that leads to the decision is echoed as such; an intent as the longest
 * of its examples among the words heard, else its first example (else its name); values as the
 * value words heard. Never the raw recogniser output of an offline
 * grammar ("no nope will"), which a caller could not answer.
 */
export function hearingEcho(heard: Heard, decision: string | undefined, settings: SmartAiSettings, unsupported: boolean): string {
  if (heard.kind === 'silence') return '';
  const text = heard.kind === 'dtmf' ? heard.digits : heard.text.trim();
  if (heard.kind !== 'utterance' || !decision) return text;
  if (!unsupported && (heard.meaning === 'yes' || heard.meaning === 'no')) return heard.meaning;
  // Values as the words that make them ("eight of december" from "that there eight of december").
  if (!decision.startsWith('intent:')) return tokens(text).filter((w) => valueWords.has(w)).join(' ') || text;
  const intent = settings.intents.find((i) => `intent:${i.name}` === decision);
  if (!intent) return text;
  // The example the caller said ("bye" for a goodbye heard in "and bye"), else the first one;
  // matched the way matchIntent matches examples.
  const said = ` ${normalize(text)} `;
  const longest = intent.examples
    .filter((e) => normalize(e) && said.includes(` ${normalize(e)} `))
    .reduce<string | undefined>((a, e) => (a === undefined || tokens(e).length > tokens(a).length ? e : a), undefined);
  return longest ?? intent.examples[0] ?? spacedName(intent.name);
}

/**
 * "Did you say ...?" before a block acts on a doubtful hearing. A plain yes confirms, and so does
 * a yes a grammar heard with no other meaning, said with confidence; a plain no, a silence or a
 * doubtful answer does not (the block asks again, never guesses); anything else said with
 * confidence is returned as the caller's next answer (callers often repeat or correct themselves
 * instead of saying yes).
 */
export async function confirmHearing(
  ctx: BlockContext,
  heard: string,
  confidence: number | undefined,
  sayOptions: BlockSayOptions,
  listenOptions: { readonly timeoutMs?: number } | undefined,
  thresholds: { readonly confirmBelowConfidence: number; readonly rejectBelowConfidence: number },
): Promise<'yes' | 'no' | Heard> {
  ctx.note({ kind: 'confirm', heard, ...(confidence !== undefined ? { confidence } : {}) });
  await ctx.say(`Sorry, did you say: ${heard}?`, sayOptions);
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

const valueWords = new Set(dateWords);

const polarWords = new Set(['yes', 'yeah', 'yep', 'please', 'sure', 'okay', 'ok', 'no', 'nope', 'thanks', 'not', 'really', 'haan', 'ji', 'nahi', 'nahin']);

/** Only yes/no words: an answer to the question, not a new statement. */
function isPlainAnswer(text: string): boolean {
  const words = text.toLowerCase().split(/[^a-z']+/).filter(Boolean);
  return words.length > 0 && words.every((w) => polarWords.has(w));
}

function deny(ctx: BlockContext, reason: 'silence' | 'lowConfidence' | undefined, heard?: string): 'no' {
  ctx.note({ kind: 'denied', ...(reason ? { reason } : {}), ...(heard ? { heard } : {}) });
  return 'no';
}
