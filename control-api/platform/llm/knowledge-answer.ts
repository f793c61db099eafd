import { tokens } from './extract.js';

/**
 * The offline engine's AnswerFlow: the sentences of one retrieved passage that answer the
 * caller's question, chosen by the question's content words. Retrieval is lexical and OR-ed, so
 * a passage may come back for one shared word ("refund" in "do refund approvals need a
 * manager?"); such a passage is not an answer, and the engine says it does not know instead.
 */
const questionWords = new Set([
  'the', 'and', 'for', 'with', 'that', 'this', 'from', 'about', 'when', 'where', 'what', 'which', 'who', 'whom', 'whose',
  'why', 'how', 'they', 'their', 'them', 'will', 'would', 'have', 'has', 'had', 'are', 'was', 'were', 'you', 'your',
  'our', 'can', 'could', 'should', 'shall', 'may', 'might', 'must', 'any', 'some', 'into', 'its', 'does', 'did', 'done',
  'there', 'here', 'then', 'than', 'not', 'yes', 'please', 'tell', 'know', 'like', 'want', 'need', 'get', 'got',
  'just', 'also', 'much', 'many', 'long', 'often', 'soon', 'thanks', 'thank', 'hello', 'okay', 'i\'m', 'i\'d', 'don\'t',
  'until', 'till', 'mine', 'his', 'her', 'she', 'him', 'all', 'out', 'make', 'let', 'say',
]);

/** Inflections off a Latin-script word so "refunds", "refunded" and "refund" meet. */
function stem(word: string): string {
  if (!/^[a-z]+$/.test(word)) return word;
  const s = word.replace(/(?:ing|ed|es|s|ly)$/, '');
  return s.length >= 3 ? s : word;
}

function sameWord(a: string, b: string): boolean {
  const [x, y] = [stem(a), stem(b)];
  if (x === y) return true;
  const [short, long] = x.length <= y.length ? [x, y] : [y, x];
  return short.length >= 4 && long.startsWith(short);
}

export function contentWords(text: string): string[] {
  return [...new Set(tokens(text).filter((w) => w.length >= 3 && !questionWords.has(w)))];
}

export function passageSentences(passage: string): string[] {
  return (passage.replace(/\s+/g, ' ').trim().match(/[^.!?।؟]+(?:[.!?।؟]+["')\]]*(?=\s|$)|$)/gu) ?? [])
    .map((s) => s.trim())
    .filter(Boolean);
}

/** How many of the question's content words the sentence has. */
function overlap(keywords: readonly string[], sentence: string): number {
  const words = tokens(sentence);
  return keywords.filter((k) => words.some((w) => sameWord(w, k))).length;
}

/**
 * One or two sentences of the single best-matching passage, in the passage's order;
 * undefined when no sentence has half of the question's content words (at most three needed).
 */
export function answerFromPassages(question: string, passages: readonly string[], maxSentences = 2): string | undefined {
  const keywords = contentWords(question);
  if (keywords.length === 0) return undefined;
  // Half the question's content words, capped at three so a long, chatty question can still match.
  const needed = Math.min(3, Math.ceil(keywords.length / 2));
  const goodEnough = (score: number): boolean => score >= needed;
  let best: { sentences: string[]; scores: number[]; top: number } | undefined;
  for (const passage of passages) {
    const sentences = passageSentences(passage);
    const scores = sentences.map((s) => overlap(keywords, s));
    const top = Math.max(0, ...scores);
    if (goodEnough(top) && (!best || top > best.top)) best = { sentences, scores, top };
  }
  if (!best) return undefined;
  const { sentences, scores, top } = best;
  const first = scores.indexOf(top);
  // A second sentence only when it continues the best one or answers as well on its own:
  // a sentence elsewhere in the passage that shares one word is not part of the answer.
  const second = sentences
    .map((_, i) => i)
    .filter((i) => i !== first && scores[i]! > 0 && (Math.abs(i - first) === 1 || (scores[i] === top && top >= 2)))
    .sort((a, b) => scores[b]! - scores[a]! || Math.abs(a - first) - Math.abs(b - first))[0];
  const chosen = maxSentences > 1 && second !== undefined ? [first, second].sort((a, b) => a - b) : [first];
  return chosen.map((i) => sentences[i]).join(' ');
}
