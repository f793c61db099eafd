import type { TemplatedReplies, TurnRequest, TurnResult, VariableSpec } from '../../llm/agent-engine.js';
import { tokens } from '../../llm/extract.js';
import type { ChatMessage } from '../../llm/chat-provider.js';
import type { GlobalSettings, SmartAiSettings } from '../recipe-schema.js';
import type { BlockContext, BlockSayOptions } from '../runtime/block.js';
import type { Heard } from '../runtime/conversation.js';
import { TextStream } from '../runtime/text-stream.js';
import { confirmHearing, hearingEcho } from './confirm-hearing.js';
import { amountInPieces, decisionOf, meaningDisagrees, rivalReading } from './hearing-doubt.js';
import { expectationFor } from './listen-expectation.js';

/**
 * What SmartAI and Ask share: instructions from the prompt plus the recipe's persona and
 * confines, AnswerFlow retrieval, the reply templates the offline engine speaks, and one turn
 * loop with retry counting, nudges and intent passing. The two blocks differ only in when the
 * conversation is complete (see `isDone`).
 */
const passagesPerTurn = 3;

export function buildInstructions(ctx: BlockContext, settings: SmartAiSettings): string {
  const parts = [ctx.render(settings.prompt)];
  if (settings.additionalInstructions.trim()) parts.push(`Additional instructions:\n${ctx.render(settings.additionalInstructions)}`);
  if (ctx.global.persona.trim()) parts.push(`Persona (tone, style, dialect):\n${ctx.render(ctx.global.persona)}`);
  if (ctx.global.confines.trim()) parts.push(`Confines (never go beyond these):\n${ctx.render(ctx.global.confines)}`);
  if (settings.answerFlow.enabled && settings.answerFlow.formattingInstructions.trim()) {
    parts.push(`When answering from knowledge: ${ctx.render(settings.answerFlow.formattingInstructions)}`);
  }
  return parts.join('\n\n');
}

/**
 * Lines the offline engine speaks, written inside the prompt so one recipe serves both engines:
 * `Opening: ...` (first line of the block), `Reprompt: ...` (when nothing matched) and
 * `Reply <intent>: ...` (spoken when that intent is detected). An LLM reads them as guidance.
 */
export function templatedReplies(renderedPrompt: string): TemplatedReplies {
  const intents: Record<string, string> = {};
  let opening: string | undefined;
  let reprompt: string | undefined;
  for (const line of renderedPrompt.split(/\r?\n/)) {
    const match = /^\s*(Opening|Reprompt|Reply\s+([A-Za-z_][A-Za-z0-9_]*))\s*:\s*(.+)$/.exec(line);
    if (!match) continue;
    const value = (match[3] ?? '').trim();
    if (match[1] === 'Opening') opening ??= value;
    else if (match[1] === 'Reprompt') reprompt ??= value;
    else if (match[2]) intents[match[2]] = value;
  }
  return { opening, reprompt, intents };
}

export function variableSpecs(settings: SmartAiSettings): VariableSpec[] {
  return settings.variables.map((v) => ({ name: v.name, description: v.description, kind: v.type, options: v.options }));
}

/** The library tags a block answers from (its AnswerFlow, else the recipe's knowledge base); undefined: none. */
export function knowledgeTags(settings: SmartAiSettings, global: Pick<GlobalSettings, 'knowledgeBase'>): readonly string[] | undefined {
  if (settings.answerFlow.enabled) return settings.answerFlow.documentTags;
  return global.knowledgeBase.enabled ? global.knowledgeBase.documentTags : undefined;
}

async function retrieve(ctx: BlockContext, settings: SmartAiSettings, query: string): Promise<string[] | undefined> {
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

/** Knowledge words a question can be heard as (more cost the offline recogniser time per turn). */
export const vocabularySize = 150;

/** What the block's AnswerFlow library talks about, for the recogniser; [] without AnswerFlow. */
async function knowledgeVocabulary(ctx: BlockContext, settings: SmartAiSettings): Promise<readonly string[]> {
  const tags = knowledgeTags(settings, ctx.global);
  if (!tags || !ctx.services.knowledge?.vocabulary) return [];
  return ctx.services.knowledge.vocabulary(ctx.call.tenantId, tags, vocabularySize).catch((error: unknown) => {
    ctx.warn(`knowledge vocabulary unavailable: ${(error as Error).message}`);
    return [];
  });
}

export type TurnLoopResult = { readonly exit: string };

export interface TurnLoopOptions {
  /** True when the block has what it came for (Ask: every variable captured in this block). */
  readonly isDone: (captured: ReadonlySet<string>) => boolean;
  readonly doneExit: string;
  /** Spoken when the engine's opening is empty (an Ask always asks before it takes an answer). */
  readonly openingFallback?: (ctx: BlockContext) => string;
  /**
   * The block asks one question whose words callers echo in their answer (Ask): the recogniser
   * takes them as the frame of an answer. A SmartAI block's lines are longer and share words with
   * its intents, amounts and knowledge ("tell" took the place of "thousand", "plant" left a
   * question's words), so it gets none.
   */
  readonly answersEchoQuestion?: boolean;
}

/** Said before the reprompt when nothing usable was heard (no words, or below rejectBelowConfidence). */
const notUnderstood = 'Sorry, I did not catch that.';

export async function conversationLoop(ctx: BlockContext, settings: SmartAiSettings, options?: TurnLoopOptions): Promise<TurnLoopResult> {
  const instructions = buildInstructions(ctx, settings);
  const replies = templatedReplies(ctx.render(settings.prompt));
  const earlier: ChatMessage[] = settings.conversationHistory ? ctx.history() : [];
  const exchange: ChatMessage[] = [];
  const base = {
    instructions,
    intents: settings.intents.map((i) => ({ name: i.name, description: i.description, ...(i.examples.length > 0 ? { examples: i.examples } : {}) })),
    variables: variableSpecs(settings),
    expressiveness: settings.expressiveness,
    replies,
    today: ctx.today(),
    signal: ctx.signal,
  } satisfies Omit<TurnRequest, 'history'>;

  // The block's speech normalisation rules go with every line it speaks (spec: each rule adds latency).
  const sayOptions = { bargeIn: settings.bargeIn, speechNormalization: settings.speechNormalization };
  const speak = async (text: string): Promise<void> => {
    if (!text) return;
    await ctx.say(text, sayOptions);
  };
  // Before the question: what the caller may answer shapes recognition, and anything said during
  // earlier blocks is no answer to this one.
  const vocabulary = await knowledgeVocabulary(ctx, settings);
  // The block's question: callers answer in its words ("yes, I will be at home tomorrow").
  const question = options?.answersEchoQuestion ? (replies.opening ?? options.openingFallback?.(ctx)) : undefined;
  const frameWords = question ? tokens(question).filter((w) => !vocabulary.includes(w)) : [];
  const expectation = {
    ...expectationFor(settings),
    ...(vocabulary.length > 0 ? { words: vocabulary } : {}),
    ...(frameWords.length > 0 ? { frameWords } : {}),
  };
  ctx.expect(expectation);
  const opening = await streamedTurn(ctx, sayOptions, true, (onDelta) => ctx.services.engine.turn({ ...base, history: earlier, onDelta }));
  const openingText = opening.spoken || opening.result.reply || options?.openingFallback?.(ctx) || '';
  if (!opening.spoken) await speak(openingText);
  if (openingText) exchange.push({ role: 'assistant', content: openingText });
  let lastPrompt = openingText || replies.reprompt || '';
  let turns = 0;
  const captured = new Set<string>();
  const listenOptions = settings.nudgeAfterMs ? { timeoutMs: settings.nudgeAfterMs } : undefined;
  /** One more turn that got the block nowhere: true when the retry limit is spent. */
  const spent = (): boolean => ++turns >= settings.retryLimit;
  let carried: Heard | undefined;
  for (;;) {
    const heard = carried ?? (await ctx.listen(listenOptions));
    carried = undefined;
    if (heard.kind === 'silence') {
      // Nudge off: keep waiting; the call's silence/duration limits end a dead line, not the block.
      if (!settings.nudge) continue;
      ctx.note({ kind: 'nudge', reason: 'silence' });
      if (spent()) return { exit: 'fallback' };
      const nudge = replies.reprompt ?? lastPrompt;
      if (nudge) await ctx.say(nudge, sayOptions);
      continue;
    }
    const userText = heard.kind === 'dtmf' ? heard.digits : heard.text.trim();
    const confidence = heard.kind === 'utterance' ? heard.confidence : undefined;
    // Speech with no words the recogniser could stand behind: say so now (no dead air), never guess.
    if (!userText || (confidence !== undefined && confidence < settings.rejectBelowConfidence)) {
      ctx.note({ kind: 'reprompt', reason: userText ? 'lowConfidence' : 'notUnderstood', ...(userText ? { heard: userText } : {}), ...(confidence !== undefined ? { confidence } : {}) });
      if (spent()) return { exit: 'fallback' };
      await speak(`${notUnderstood} ${replies.reprompt ?? lastPrompt}`.trim());
      continue;
    }
    // Too unsure to act on at once: a low confidence, or another reading of the same audio that
    // would go elsewhere (n-best). Such a hearing is confirmed before the block acts on it.
    const unsure = confidence !== undefined && confidence < settings.confirmBelowConfidence;
    const rival = rivalReading(heard, settings, ctx.today()) !== undefined;
    const doubtful = unsure || rival;
    const knowledge = await retrieve(ctx, settings, userText);
    // Streaming is safe on every turn but the last allowed one (an unmatched reply there must not
    // be spoken: the block leaves through fallback), a doubtful one (it may be confirmed away) and
    // one a grammar heard: the engine's decision must first be supported by the meaning heard
    // (meaningDisagrees), which is only known once the turn is complete.
    const grammarHeard = heard.kind === 'utterance' && heard.meaning !== undefined;
    const mayStream = turns + 1 < settings.retryLimit && !doubtful && !grammarHeard;
    const history = [...earlier, ...exchange];
    const turn = await streamedTurn(ctx, sayOptions, mayStream, (onDelta) => ctx.services.engine.turn({ ...base, history, userText, knowledge, onDelta }));
    const result: TurnResult = turn.result;
    const decision = decisionOf(result);
    // An amount heard in pieces: which piece is the amount cannot be told, so there is nothing to
    // confirm ("did you say 5?" about a 5 that was the day of the date); the caller says it again.
    if (amountInPieces(heard, result.values, settings)) {
      ctx.note({ kind: 'reprompt', reason: 'amountInPieces', heard: userText, ...(confidence !== undefined ? { confidence } : {}) });
      if (spent()) return { exit: 'fallback' };
      await speak(`${notUnderstood} ${replies.reprompt ?? lastPrompt}`.trim());
      continue;
    }
    const unsupported = meaningDisagrees(heard, decision, settings);
    if ((doubtful || unsupported) && decision) {
      // Only a plain yes settles a doubt. Hearing the same doubtful words again does not: a
      // recogniser that misheard them once mishears the same way when they are repeated.
      // The answer to "Did you say ...?" is a yes, a no or a correction: heard without the
      // block's values and questions (a bare "no" was heard as "twelve" among amounts and dates).
      ctx.expect({ phrases: expectation.phrases, values: [], ...(expectation.frameWords ? { frameWords: expectation.frameWords } : {}), ...(expectation.dtmf ? { dtmf: expectation.dtmf } : {}) });
      const answer = await confirmHearing(ctx, hearingEcho(heard, decision, settings, unsupported), confidence, sayOptions, listenOptions, settings);
      ctx.expect(expectation);
      if (answer !== 'yes') {
        if (spent()) return { exit: 'fallback' };
        // Anything else said is the caller's next answer; a "no" or a doubt gets the question again.
        if (answer !== 'no') carried = answer;
        else await speak(replies.reprompt ?? lastPrompt);
        continue;
      }
    }
    for (const [name, value] of Object.entries(result.values)) {
      ctx.setVariable(name, value);
      captured.add(name);
    }
    exchange.push({ role: 'user', content: userText });
    if (result.intent) {
      if (settings.intentVariable) ctx.setVariable(settings.intentVariable, result.intent);
      if (!turn.spoken) await speak(result.reply);
      return { exit: result.intent };
    }
    if (options?.isDone(captured)) {
      if (!turn.spoken) await speak(result.reply);
      return { exit: options.doneExit };
    }
    ctx.note({ kind: 'reprompt', reason: 'noMatch', heard: userText, ...(confidence !== undefined ? { confidence } : {}) });
    if (spent()) return { exit: 'fallback' };
    // A model that only called the tool leaves the caller in silence; say the reprompt instead.
    const reply = turn.spoken || result.reply || replies.reprompt || lastPrompt;
    if (!turn.spoken) await speak(reply);
    if (reply) {
      exchange.push({ role: 'assistant', content: reply });
      lastPrompt = reply;
    }
  }
}

/**
 * Runs one engine turn, feeding its text deltas to the conversation's streaming speech when it
 * has one (and `allowed`); returns the turn and the text already spoken ('' when none).
 */
async function streamedTurn(
  ctx: BlockContext,
  sayOptions: BlockSayOptions,
  allowed: boolean,
  turn: (onDelta: ((text: string) => void) | undefined) => Promise<TurnResult>,
): Promise<{ result: TurnResult; spoken: string }> {
  const sayStream = ctx.sayStream;
  if (!sayStream || !allowed) return { result: await turn(undefined), spoken: '' };
  const stream = new TextStream();
  let speaking: Promise<{ text: string }> | undefined;
  const onDelta = (text: string): void => {
    stream.push(text);
    speaking ??= sayStream(stream, sayOptions);
  };
  let result: TurnResult;
  try {
    result = await turn(onDelta);
  } catch (error) {
    stream.end();
    await speaking?.catch(() => undefined);
    throw error;
  } finally {
    stream.end();
  }
  const spoken = speaking ? (await speaking).text : '';
  return { result, spoken };
}
