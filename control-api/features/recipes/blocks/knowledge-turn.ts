import { tokens } from '../../../platform/llm/extract.js';
import type { GlobalSettings, SmartAiSettings } from '../../../model/recipes/recipe-schema.js';
import type { BlockContext } from '../runtime/block.js';
import type { Heard } from '../../../../core/ports/conversation.js';

/**
 * AnswerFlow for a listening block: which library it answers from, the words its questions may be
 * heard as, retrieval, and when a turn is a question at all. Knowledge answers questions only: a
 * farewell or a request for a person is no question, and a passage that happens to share a word
 * with it ("actually never mind, bye" answered with the refund paragraph) is never read out.
 */
const passagesPerTurn = 3;

/** Knowledge words a question can be heard as (more cost the offline recogniser time per turn). */
export const vocabularySize = 150;

/** Said after a knowledge answer that does not hand the turn back itself. */
export const anythingElse = 'Is there anything else I can help you with?';

/** The library tags a block answers from (its AnswerFlow, else the recipe's knowledge base); undefined: none. */
export function knowledgeTags(settings: SmartAiSettings, global: Pick<GlobalSettings, 'knowledgeBase'>): readonly string[] | undefined {
  if (settings.answerFlow.enabled) return settings.answerFlow.documentTags;
  return global.knowledgeBase.enabled ? global.knowledgeBase.documentTags : undefined;
}

export async function retrieve(ctx: BlockContext, settings: SmartAiSettings, query: string): Promise<string[] | undefined> {
  const tags = knowledgeTags(settings, ctx.global);
  if (!tags) return undefined;
  const search = ctx.services.knowledge;
  if (!search) {
    ctx.warn('AnswerFlow is enabled but no knowledge search is configured');
    return undefined;
  }
  const passages = await search.search(ctx.call.tenantId, query, tags, passagesPerTurn);
  return passages.map((p) => p.text);
}

/** What the block's AnswerFlow library talks about, for the recogniser; [] without AnswerFlow. */
export async function knowledgeVocabulary(ctx: BlockContext, settings: SmartAiSettings): Promise<readonly string[]> {
  const tags = knowledgeTags(settings, ctx.global);
  if (!tags || !ctx.services.knowledge?.vocabulary) return [];
  return ctx.services.knowledge.vocabulary(ctx.call.tenantId, tags, vocabularySize).catch((error: unknown) => {
    ctx.warn(`knowledge vocabulary unavailable: ${(error as Error).message}`);
    return [];
  });
}

const asking = new Set([
  'how', 'what', "what's", 'whats', 'when', 'where', "where's", 'why', 'which', 'who', 'whom', 'whose', 'can', 'could', 'do', 'does', 'did',
  'is', 'are', 'was', 'were', 'will', 'would', 'should', 'shall', 'may', 'might', 'have', 'has', 'am', 'any', "isn't", "don't", "can't",
]);
/** Words a question may start with before its question word ("so, how long ...", "hi, do you ..."). */
const leadIns = new Set(['so', 'and', 'but', 'um', 'uh', 'er', 'hi', 'hello', 'hey', 'okay', 'ok', 'well', 'actually', 'yes', 'yeah', 'please', 'sorry', 'excuse', 'me', 'also', 'just', 'then', 'oh', 'hmm', 'namaste', 'one', 'more', 'question']);
const requests = ['tell me', 'i want to know', 'i would like to know', "i'd like to know", 'i need to know', 'i wonder', 'i was wondering', 'a question', 'explain', 'what about', 'how about', 'information about'];

/**
 * A caller turn that asks something: a question mark (typed text, cloud recognisers), a question
 * word first ("how", "can", "do" after "so," or "hi,"), a request to know ("tell me about ...").
 * A grammar recogniser (one that reports `meaning`) hears a question only as the library's words,
 * with no expected meaning: that is its question reading.
 */
export function isQuestion(heard: Heard, vocabulary: readonly string[]): boolean {
  if (heard.kind !== 'utterance') return false;
  if (heard.text.includes('?')) return true;
  const words = tokens(heard.text);
  const first = words.find((w) => !leadIns.has(w));
  if (first !== undefined && asking.has(first)) return true;
  const said = ` ${words.join(' ')} `;
  if (requests.some((r) => said.includes(` ${r} `))) return true;
  return heard.meaning === '' && words.some((w) => vocabulary.includes(w));
}
