import type { TemplatedReplies, TurnRequest, TurnResult, VariableSpec, VariableValue } from '../../../platform/llm/agent-engine.js';
import { tokens } from '../../../platform/llm/extract.js';
import type { ChatMessage } from '../../../platform/llm/chat-provider.js';
import type { Intent, SmartAiSettings } from '../../../model/recipes/recipe-schema.js';
import type { BlockContext, BlockSayOptions } from '../runtime/block.js';
import type { Heard } from '../../../../core/ports/conversation.js';
import { TextStream } from '../runtime/text-stream.js';
import { confirmHearing } from './confirm-hearing.js';
import { amountInPieces, closeReadings } from './hearing-doubt.js';
import { anythingElse, isQuestion, knowledgeVocabulary, retrieve } from './knowledge-turn.js';
import { expectationFor, variableSpec } from './listen-expectation.js';
import { confirmationQuestion, isBlank, mentionsKeypad, spellOut, valueQuestion } from './meaning-words.js';
import { decide, doubtOf, intentStands, mayBeDoubted, missingCaptures, type Awaiting } from './turn-decision.js';

/**
 * What SmartAI and Ask share: instructions from the prompt plus the recipe's persona and
 * confines, AnswerFlow retrieval, the reply templates the offline engine speaks, and one turn
 * loop with retry counting, nudges and intent passing. The two blocks differ only in when the
 * conversation is complete (see `isDone`).
 */
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
  return settings.variables.map(variableSpec);
}

/** The library tags a block answers from (its AnswerFlow, else the recipe's knowledge base); undefined: none. */
export type TurnLoopResult = { readonly exit: string };

export interface TurnLoopOptions {
  /** True when the block has what it came for (Ask: every variable captured in this block). */
  readonly isDone: (captured: ReadonlySet<string>) => boolean;
  /** Said with the block's question: the caller may key the value in (Ask; meaning-words.ts). */
  readonly keypadHint?: string;
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
  const today = ctx.today();
  const base = {
    instructions,
    intents: settings.intents.map((i) => ({
      name: i.name,
      description: i.description,
      ...(i.examples.length > 0 ? { examples: i.examples } : {}),
      ...(i.captures ? { captures: i.captures } : {}),
    })),
    variables: variableSpecs(settings),
    expressiveness: settings.expressiveness,
    replies,
    today,
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
  // The answer to "Just to check ...?" is a yes, a no or a correction: heard without the block's
  // values and questions (a bare "no" was heard as "twelve" among amounts and dates).
  const confirming = { phrases: expectation.phrases, values: [], ...(expectation.frameWords ? { frameWords: expectation.frameWords } : {}), ...(expectation.dtmf ? { dtmf: expectation.dtmf } : {}) };
  const hint = options?.keypadHint ?? '';
  let carried: Heard | undefined = ctx.carried;
  let lastPrompt = replies.reprompt ?? '';
  if (!carried) {
    const opening = await streamedTurn(ctx, sayOptions, true, (onDelta) => ctx.services.engine.turn({ ...base, history: earlier, onDelta }));
    const openingText = opening.spoken || opening.result.reply || options?.openingFallback?.(ctx) || '';
    const withHint = hint && !mentionsKeypad(openingText) ? hint : '';
    if (!opening.spoken) await speak([openingText, withHint].filter(Boolean).join(' '));
    else await speak(withHint);
    if (openingText) exchange.push({ role: 'assistant', content: openingText });
    lastPrompt = openingText || lastPrompt;
  }
  let turns = 0;
  /** An Ask's values from earlier turns, stored only when the block is done with them. */
  const kept = new Map<string, VariableValue>();
  let awaiting: (Awaiting & { readonly question: string }) | undefined;
  /** Readings of values the caller said no to: heard again, they are checked again. */
  const denied: Array<Readonly<Record<string, VariableValue>>> = [];
  const listenOptions = settings.nudgeAfterMs ? { timeoutMs: settings.nudgeAfterMs } : undefined;
  /** One more turn that got the block nowhere: true when the retry limit is spent. */
  const spent = (): boolean => ++turns >= settings.retryLimit;
  /** What the block asks when it asks again: the value it waits for, else its reprompt or last question. */
  const askAgain = (): string => awaiting?.question ?? replies.reprompt ?? lastPrompt;
  /** Waiting for `names` alone: the question for them (`again` after a denied reading back), with the keypad hint for digits. */
  const awaitValues = (decision: { readonly intent?: Intent | undefined }, names: readonly string[], again: boolean): Awaiting & { readonly question: string } => {
    const asked = settings.variables.filter((v) => names.includes(v.name));
    const question = valueQuestion(asked, again);
    const withHint = hint && asked.some((v) => v.type === 'digits') && !mentionsKeypad(question) ? ` ${hint}` : '';
    return { ...(decision.intent ? { intent: decision.intent } : {}), names: asked.map((v) => v.name), question: `${question}${withHint}` };
  };
  for (;;) {
    const heard = carried ?? (await ctx.listen(listenOptions));
    carried = undefined;
    if (heard.kind === 'silence') {
      // Nudge off: keep waiting; the call's silence/duration limits end a dead line, not the block.
      if (!settings.nudge) continue;
      ctx.note({ kind: 'nudge', reason: 'silence' });
      if (spent()) return { exit: 'fallback' };
      await speak(askAgain());
      continue;
    }
    const userText = heard.kind === 'dtmf' ? heard.digits : heard.text.trim();
    const confidence = heard.kind === 'utterance' ? heard.confidence : undefined;
    const heardNote = { heard: userText, ...(confidence !== undefined ? { confidence } : {}) };
    // Speech with no words the recogniser could stand behind: say so now (no dead air), never guess.
    if (!userText || (confidence !== undefined && confidence < settings.rejectBelowConfidence)) {
      ctx.note({ kind: 'reprompt', reason: userText ? 'lowConfidence' : 'notUnderstood', ...(userText ? { heard: userText } : {}), ...(confidence !== undefined ? { confidence } : {}) });
      if (spent()) return { exit: 'fallback' };
      await speak(`${notUnderstood} ${askAgain()}`.trim());
      continue;
    }
    // Knowledge answers questions only; a farewell or a request is not looked up.
    const knowledge = isQuestion(heard, vocabulary) ? await retrieve(ctx, settings, userText) : undefined;
    // Streaming is safe on every turn but the last allowed one (an unmatched reply there must not
    // be spoken: the block leaves through fallback), one that may be confirmed away, one a grammar
    // heard (the engine's decision must first be supported by the meaning heard, which is only
    // known once the turn is complete) and one answering a reading back that was denied.
    const grammarHeard = heard.kind === 'utterance' && heard.meaning !== undefined;
    const mayStream = turns + 1 < settings.retryLimit && !mayBeDoubted(heard, settings, today) && !grammarHeard && !awaiting;
    const history = [...earlier, ...exchange];
    /** A knowledge answer that does not hand the turn back itself asks whether there is more. */
    const answers = (r: TurnResult): boolean =>
      knowledge !== undefined && knowledge.length > 0 && !r.intent && !!r.reply && r.reply !== replies.reprompt && !/\?\s*$/.test(r.reply) && !(options?.isDone && Object.keys(r.values).length > 0);
    const turn = await streamedTurn(
      ctx,
      sayOptions,
      mayStream,
      (onDelta) => ctx.services.engine.turn({ ...base, history, userText, knowledge, onDelta }),
      (r) => (answers(r) ? anythingElse : ''),
    );
    const result: TurnResult = turn.result;
    // An amount heard in pieces: which piece is the amount cannot be told, so there is nothing to
    // confirm ("is it 5?" about a 5 that was the day of the date); the caller says it again.
    if (amountInPieces(heard, result.values, settings)) {
      ctx.note({ kind: 'reprompt', reason: 'amountInPieces', ...heardNote });
      if (spent()) return { exit: 'fallback' };
      await speak(`${notUnderstood} ${askAgain()}`.trim());
      continue;
    }
    let decision = decide(result, settings, options?.isDone, kept, awaiting);
    // Nothing decided nor answered, but a reading of the same audio nearly as likely decides
    // something: that may be what the caller said; it is checked with them, never acted on at once.
    let rival: { readonly heard: Heard; readonly result: TurnResult } | undefined;
    for (const other of decision || answers(result) ? [] : closeReadings(heard)) {
      const otherResult = await ctx.services.engine.turn({ ...base, history, userText: other.text });
      const otherDecision = amountInPieces(other, otherResult.values, settings) ? undefined : decide(otherResult, settings, options?.isDone, kept, awaiting);
      if (!otherDecision) continue;
      [decision, rival] = [otherDecision, { heard: other, result: otherResult }];
      break;
    }
    if (!decision) {
      // An Ask keeps what it heard with confidence towards its answer; nothing is stored yet.
      if (options?.isDone && !mayBeDoubted(heard, settings, today)) for (const [name, value] of Object.entries(result.values)) kept.set(name, value);
      exchange.push({ role: 'user', content: userText });
      // A turn that decides nothing counts towards the retry limit, an answered question too (the
      // limit is the recipe's bound on a block that never leaves).
      const answered = answers(result);
      ctx.note(answered ? { kind: 'answered', heard: userText } : { kind: 'reprompt', reason: 'noMatch', ...heardNote });
      if (spent()) return { exit: 'fallback' };
      const reply = turn.spoken || (answered ? `${result.reply} ${anythingElse}` : awaiting ? `${notUnderstood} ${awaiting.question}` : result.reply || replies.reprompt || lastPrompt);
      if (!turn.spoken) await speak(reply);
      if (reply) exchange.push({ role: 'assistant', content: reply });
      lastPrompt = answered ? anythingElse : reply || lastPrompt;
      continue;
    }
    const doubt = rival ? 'rival' : doubtOf(heard, decision, settings, today, denied);
    if (doubt) {
      ctx.expect(confirming);
      const checked = confirmationQuestion(decision.intent, decision.values, settings.variables, today, (name) => ctx.lookup(name));
      const answer = await confirmHearing(ctx, checked, userText, confidence, { ...sayOptions, spellOut: spellOut(settings.variables, decision.values) }, listenOptions, settings);
      ctx.expect(expectation);
      if (answer !== 'yes') {
        if (spent()) return { exit: 'fallback' };
        // Anything else said is the caller's next answer; after a "no" the block asks for the
        // values alone when there were some and the intent stands ("Which day would suit you?"),
        // else asks its question again.
        for (const name of Object.keys(decision.values)) kept.delete(name);
        if (answer === 'no' && Object.keys(decision.values).length > 0) denied.push(decision.values);
        if (answer !== 'no') carried = answer;
        else if (Object.keys(decision.values).length > 0 && (!decision.intent || decision.answersAwaited || intentStands(rival?.heard ?? heard, decision, settings, doubt))) {
          awaiting = awaitValues(decision, Object.keys(decision.values), true);
          await speak(`Sorry about that. ${awaiting.question}`);
        } else {
          awaiting = undefined;
          await speak(askAgain());
        }
        continue;
      }
    }
    // Some of what the intent stores was said, some not: ask for the rest before acting on it,
    // while the retry limit leaves a turn for the answer (else it is acted on as said).
    const missing = missingCaptures(decision, (name) => !isBlank(ctx.lookup(name)));
    if (missing.length > 0 && turns + 1 < settings.retryLimit) {
      ctx.note({ kind: 'reprompt', reason: 'missingValues', ...heardNote });
      turns++;
      awaiting = { ...awaitValues(decision, missing, false), known: decision.values };
      exchange.push({ role: 'user', content: userText });
      await speak(awaiting.question);
      exchange.push({ role: 'assistant', content: awaiting.question });
      continue;
    }
    for (const [name, value] of Object.entries(decision.values)) ctx.setVariable(name, value);
    exchange.push({ role: 'user', content: userText });
    // The engine's reply goes with its own decision; an intent resumed from a denied reading back speaks its reply line.
    const decided = rival?.result ?? result;
    const reply = decision.intent && decided.intent !== decision.intent.name ? (replies.intents?.[decision.intent.name] ?? '') : decided.reply;
    if (decision.intent) {
      if (settings.intentVariable) ctx.setVariable(settings.intentVariable, decision.intent.name);
      if (!turn.spoken) await speak(reply);
      return { exit: decision.intent.name };
    }
    if (!turn.spoken) await speak(reply);
    return { exit: options?.doneExit ?? 'next' };
  }
}

/**
 * Runs one engine turn, feeding its text deltas to the conversation's streaming speech when it
 * has one (and `allowed`); returns the turn and the text already spoken ('' when none).
 * `epilogue` is said at the end of the same line once the turn is known (a follow-up question).
 */
async function streamedTurn(
  ctx: BlockContext,
  sayOptions: BlockSayOptions,
  allowed: boolean,
  turn: (onDelta: ((text: string) => void) | undefined) => Promise<TurnResult>,
  epilogue?: (result: TurnResult) => string,
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
    const after = speaking ? epilogue?.(result) : undefined;
    if (after) stream.push(` ${after}`);
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
