import type { AgentEngine, IntentSpec, TurnRequest, TurnResult, VariableValue } from './agent-engine.js';
import { extractBoolean, extractValue, normalize, tokens } from './extract.js';
import { answerFromPassages } from './knowledge-answer.js';

/**
 * The engine that needs no API key: keyword/example intent matching and typed value extraction,
 * speaking the block's templated replies. Deterministic, so scripted simulations are exact.
 * What it cannot do (paraphrase, reasoning, open questions) is listed in docs/recipes.md.
 */
const stopWords = new Set([
  'the', 'and', 'for', 'with', 'that', 'this', 'from', 'caller', 'user', 'customer', 'wants', 'want', 'says',
  'said', 'about', 'when', 'they', 'their', 'them', 'will', 'would', 'have', 'has', 'are', 'was', 'you', 'your',
  'our', 'can', 'could', 'any', 'some', 'into', 'its', 'intent', 'asks', 'ask',
]);
const affirmative = ['yes', 'confirm', 'agree', 'accept', 'affirm', 'ok', 'okay'];
const negative = ['no', 'deny', 'decline', 'refuse', 'reject', 'not', 'cancel'];
const fallbackReprompt = 'Sorry, I did not catch that. Could you say it again?';

export class OfflineEngine implements AgentEngine {
  readonly name = 'offline';

  async turn(request: TurnRequest): Promise<TurnResult> {
    const replies = request.replies ?? {};
    if (request.userText === undefined) return emit(request, replies.opening ?? '', undefined, {});
    const text = request.userText;
    const intent = matchIntent(request.intents, text);
    const values: Record<string, VariableValue> = {};
    const today = request.today ?? new Date().toISOString().slice(0, 10);
    for (const spec of request.variables) {
      // Free text would swallow every utterance, so it is only captured when it is the sole ask.
      if (spec.kind === 'text' && request.variables.length > 1) continue;
      const value = extractValue(spec, text, today);
      if (value !== undefined) values[spec.name] = value;
    }
    if (intent) return emit(request, replies.intents?.[intent] ?? '', intent, values);
    const capturedAll = request.variables.length > 0 && request.variables.every((v) => v.name in values);
    if (capturedAll) return emit(request, '', undefined, values);
    // AnswerFlow: the relevant sentences of the best passage, or the reprompt when none fits.
    const answer = request.knowledge ? answerFromPassages(text, request.knowledge) : undefined;
    if (answer) return emit(request, answer, undefined, values);
    return emit(request, replies.reprompt ?? fallbackReprompt, undefined, values);
  }
}

function emit(request: TurnRequest, reply: string, intent: string | undefined, values: Record<string, VariableValue>): TurnResult {
  if (reply) request.onDelta?.(reply);
  return intent ? { reply, intent, values } : { reply, values };
}

/** Best-scoring intent, or undefined when nothing in the utterance points at one. */
export function matchIntent(intents: readonly IntentSpec[], text: string): string | undefined {
  const said = tokens(text);
  const saidText = ` ${normalize(text)} `;
  const polarity = extractBoolean(text);
  let best: { name: string; score: number } | undefined;
  for (const intent of intents) {
    let score = 0;
    for (const example of intent.examples ?? []) {
      const needle = normalize(example);
      if (needle && saidText.includes(` ${needle} `)) score = Math.max(score, 4 + needle.length / 100);
    }
    const label = tokens(`${intent.name.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/_/g, ' ')} ${intent.description}`);
    if (polarity === true && label.some((w) => affirmative.includes(w))) score = Math.max(score, 3);
    if (polarity === false && label.some((w) => negative.includes(w))) score = Math.max(score, 3);
    const keywords = new Set([...label, ...(intent.examples ?? []).flatMap((e) => tokens(e))].filter(isKeyword));
    let overlap = 0;
    for (const keyword of keywords) if (said.some((w) => isKeyword(w) && sameStem(w, keyword))) overlap++;
    score = Math.max(score, overlap);
    if (score >= 1 && (!best || score > best.score)) best = { name: intent.name, score };
  }
  return best?.name;
}

function isKeyword(word: string): boolean {
  return word.length >= 3 && !stopWords.has(word) && !/^\d+$/.test(word);
}

function sameStem(a: string, b: string): boolean {
  const [short, long] = a.length <= b.length ? [a, b] : [b, a];
  return long.startsWith(short) && short.length >= Math.min(4, long.length);
}
