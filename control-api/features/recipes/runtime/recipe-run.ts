import { TypedEmitter } from '../../../../core/typed-emitter.js';
import type { ChatMessage } from '../../../platform/llm/chat-provider.js';
import { exitsOf } from '../../../model/recipes/recipe-graph.js';
import type { Block, BlockOf, BlockType, Recipe } from '../../../model/recipes/recipe-schema.js';
import type { BlockContext, BlockModule, BlockOutcome, BlockSayOptions } from './block.js';
import { builtinVariables, localTime, type CallContext } from './call-context.js';
import { CallEndedError, type Conversation, type Heard, type SayOptions } from '../../../../core/ports/conversation.js';
import type { RunEnd, RunEvents, RunStep, TranscriptEntry } from './run-events.js';
import type { RuntimeServices } from './services.js';
import { render, renderDeep, resolve, type TemplateScope } from './templating.js';

export type BlockRegistry = { readonly [T in BlockType]: BlockModule<BlockOf<T>['settings']> };

export interface RecipeRunOptions {
  readonly recipe: Recipe;
  readonly conversation: Conversation;
  readonly context: CallContext;
  readonly services: RuntimeServices;
  readonly blocks: BlockRegistry;
  /** Guards against graphs that loop without ever waiting for the caller. Default 500. */
  readonly maxSteps?: number;
}

export interface RunResult extends RunEnd {
  readonly path: readonly string[];
  /** The path with how each block was left and its reprompts/confirmations. */
  readonly steps: readonly RunStep[];
  readonly variables: Readonly<Record<string, unknown>>;
  readonly transcript: readonly TranscriptEntry[];
}

/**
 * Exits a runner may take when a block throws instead of returning an outcome. Chosen by exit
 * name, not by block type: any block exposing a failure exit gets its failure routed there.
 */
const failureExits = ['fallback', 'ifFails', 'failure', 'failed'];

/**
 * Times a run goes back from a closing line the caller spoke over: once. The closing line after
 * it cannot be cut short, so a caller (or a recording, a television) that keeps talking does not
 * keep the call from ending.
 */
const maxReopens = 1;

/** A block's normalisation rules, passed on only when it set them (absent: the pipeline's default). */
const normalization = (options: BlockSayOptions): Pick<BlockSayOptions, 'speechNormalization'> =>
  options.speechNormalization ? { speechNormalization: options.speechNormalization } : {};

/** A cursor over a recipe's block graph for one call. */
export class RecipeRun extends TypedEmitter<RunEvents> {
  readonly transcript: TranscriptEntry[] = [];
  readonly path: string[] = [];
  readonly steps: RunStep[] = [];
  private readonly vars = new Map<string, unknown>();
  private readonly controller = new AbortController();
  private readonly blocksById: ReadonlyMap<string, Block>;
  private readonly routes: ReadonlyMap<string, string>;
  private started = false;
  /** Each block run, with the first caller turn said while it ran (Conversation.nextTurn). */
  private readonly blockTurns: { readonly blockId: string; readonly fromTurn: number }[] = [];
  /** Variables the recipe's listening blocks declare as digit strings: read one digit at a time. */
  private readonly digitVariables: ReadonlySet<string>;
  /** Words said over a closing line, for the listening block the run went back to. */
  private carried: Heard | undefined;
  private reopens = 0;
  /**
   * The closing line the run went back from, with the decision that led to it: when the block
   * gone back to decides exactly that again (same exit, same variables), the words said over the
   * line changed nothing, and the run says the rest of the line and ends, instead of running the
   * blocks after the decision again (a webhook sent twice) and the line from its start.
   */
  private reopened: { readonly from: RunStep; readonly vars: string; readonly close: { readonly blockId: string; readonly type: string; readonly disposition: string; readonly unspoken: string } } | undefined;

  constructor(private readonly options: RecipeRunOptions) {
    super();
    this.blocksById = new Map(options.recipe.blocks.map((b) => [b.id, b]));
    this.routes = new Map(options.recipe.connections.map((c) => [`${c.from}\u0000${c.exit}`, c.to]));
    this.digitVariables = new Set(
      options.recipe.blocks.flatMap((b) => (b.type === 'smartAi' || b.type === 'ask' ? b.settings.variables.filter((v) => v.type === 'digits').map((v) => v.name) : [])),
    );
    for (const [name, value] of Object.entries(options.context.campaignVariables)) this.vars.set(name, value);
    // Words that did not drive the flow still belong in the transcript (spec: barge-in disabled).
    // Under the block that was running when they were said: recognition takes a moment, and by
    // then the next block may have begun; words said before the first block belong to it.
    options.conversation.onIgnored?.((text, why, turn) => {
      const saidDuring = turn === undefined ? undefined : this.blockTurns.findLast((b) => b.fromTurn <= turn);
      const blockId = saidDuring?.blockId ?? (turn === undefined ? this.path[this.path.length - 1] : undefined) ?? options.recipe.startBlockId;
      this.record({ at: options.context.now(), speaker: 'caller', text, blockId, ignored: why });
    });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  variables(): Record<string, unknown> {
    return Object.fromEntries(this.vars);
  }

  /** The caller hung up (or the platform cancels the call): the current block stops at once. */
  hangup(): void {
    this.controller.abort(new CallEndedError('caller hung up'));
  }

  async run(external?: AbortSignal): Promise<RunResult> {
    if (this.started) throw new Error('a RecipeRun runs once');
    this.started = true;
    if (external) {
      if (external.aborted) this.hangup();
      else external.addEventListener('abort', () => this.hangup(), { once: true });
    }
    const end = await this.walk();
    this.emit('ended', end);
    return { ...end, path: [...this.path], steps: this.steps.map((s) => ({ ...s, turns: [...s.turns] })), variables: this.variables(), transcript: [...this.transcript] };
  }

  private async walk(): Promise<RunEnd> {
    const maxSteps = this.options.maxSteps ?? 500;
    let blockId: string | undefined = this.options.recipe.startBlockId;
    for (let step = 0; blockId !== undefined; step++) {
      const block = this.blocksById.get(blockId);
      if (!block) return this.fail(blockId, `block '${blockId}' does not exist`);
      if (step >= maxSteps) return this.finish({ reason: 'stepLimit', lastBlockId: blockId }, blockId);
      if (this.signal.aborted) return { reason: 'callerHangup', lastBlockId: blockId };
      this.path.push(block.id);
      this.blockTurns.push({ blockId: block.id, fromTurn: this.options.conversation.nextTurn ?? 0 });
      const visit: RunStep = { blockId: block.id, type: block.type, turns: [] };
      this.steps.push(visit);
      this.emit('blockEntered', { blockId: block.id, type: block.type });
      let outcome: BlockOutcome;
      try {
        outcome = await this.runBlock(block);
      } catch (error) {
        if (this.signal.aborted || error instanceof CallEndedError) {
          visit.end = 'callerHangup';
          this.emit('blockExited', { blockId: block.id, type: block.type, end: 'callerHangup' });
          return { reason: 'callerHangup', lastBlockId: block.id };
        }
        const message = error instanceof Error ? error.message : String(error);
        this.emit('error', { blockId: block.id, message });
        this.options.services.logger.warn({ blockId: block.id, err: message }, 'recipe block failed');
        const exit = failureExits.find((e) => this.routes.has(`${block.id}\u0000${e}`));
        if (!exit) return this.fail(block.id, `block '${block.id}' failed and has no connected failure exit`);
        outcome = { exit };
      }
      if ('end' in outcome && outcome.end === 'closed' && outcome.saidOver) {
        // The caller spoke over the closing line: back to the block that last listened, which
        // takes the words as its answer (a date said over "Take care, goodbye" is acted on).
        const back = this.reopenTarget(visit);
        if (back) {
          this.reopens++;
          this.reopened = { from: back, vars: this.varsKey(), close: { blockId: block.id, type: block.type, disposition: outcome.disposition, unspoken: outcome.unspoken ?? '' } };
          const note = { blockId: block.id, kind: 'saidOver' as const, ...(outcome.saidOver.kind === 'utterance' ? { heard: outcome.saidOver.text } : {}) };
          visit.turns.push(note);
          this.emit('turn', note);
          this.emit('blockExited', { blockId: block.id, type: block.type });
          this.carried = outcome.saidOver;
          blockId = back.blockId;
          continue;
        }
      }
      if ('end' in outcome) {
        visit.end = outcome.end;
        this.emit('blockExited', { blockId: block.id, type: block.type, end: outcome.end });
        return outcome.end === 'closed'
          ? this.finish({ reason: 'closed', disposition: outcome.disposition, lastBlockId: block.id }, block.id)
          : { reason: 'transferred', transferTarget: outcome.target, lastBlockId: block.id };
      }
      if (!exitsOf(block).includes(outcome.exit)) {
        // A block module returned an exit its type does not declare: a bug, never a routing choice.
        return this.fail(block.id, `block '${block.id}' returned unknown exit '${outcome.exit}'; its exits are ${exitsOf(block).join(', ') || 'none'}`);
      }
      visit.exit = outcome.exit;
      this.emit('blockExited', { blockId: block.id, type: block.type, exit: outcome.exit });
      const reopened = this.reopened;
      this.reopened = undefined;
      if (reopened && reopened.from.blockId === block.id && reopened.from.exit === outcome.exit && reopened.vars === this.varsKey()) return this.closeAgain(reopened.close);
      blockId = this.routes.get(`${block.id}\u0000${outcome.exit}`);
      if (blockId === undefined) {
        // Spec/graph contract: an exit without a connection ends the call.
        return this.finish({ reason: 'exitNotConnected', lastBlockId: block.id, lastExit: outcome.exit }, block.id);
      }
    }
    return { reason: 'error' };
  }

  private async runBlock(block: Block): Promise<BlockOutcome> {
    const module = this.options.blocks[block.type] as BlockModule<Block['settings']>;
    const ctx = this.contextFor(block.id);
    // Race the block against the hangup so even a block that ignores its signal is abandoned.
    return await new Promise<BlockOutcome>((resolve, reject) => {
      const onAbort = (): void => reject(new CallEndedError());
      if (this.signal.aborted) return onAbort();
      this.signal.addEventListener('abort', onAbort, { once: true });
      module.run(ctx, block.settings, this.signal).then(resolve, reject).finally(() => this.signal.removeEventListener('abort', onAbort));
    });
  }

  /** The rest of a closing line cut short by words that changed nothing; then the call ends as that line would have ended it. */
  private async closeAgain(close: { readonly blockId: string; readonly type: string; readonly disposition: string; readonly unspoken: string }): Promise<RunEnd> {
    this.path.push(close.blockId);
    const visit: RunStep = { blockId: close.blockId, type: close.type, turns: [] };
    this.steps.push(visit);
    this.emit('blockEntered', { blockId: close.blockId, type: close.type });
    try {
      await this.contextFor(close.blockId).say(close.unspoken, { bargeIn: false });
    } catch (error) {
      if (this.signal.aborted || error instanceof CallEndedError) {
        visit.end = 'callerHangup';
        this.emit('blockExited', { blockId: close.blockId, type: close.type, end: 'callerHangup' });
        return { reason: 'callerHangup', lastBlockId: close.blockId };
      }
      throw error;
    }
    visit.end = 'closed';
    this.emit('blockExited', { blockId: close.blockId, type: close.type, end: 'closed' });
    return this.finish({ reason: 'closed', disposition: close.disposition, lastBlockId: close.blockId }, close.blockId);
  }

  /** The run's variables as one comparable string (a value JSON cannot hold compares unequal: the line is said again). */
  private varsKey(): string {
    try {
      return JSON.stringify([...this.vars.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    } catch {
      return `unserialisable ${Math.random()}`;
    }
  }

  private async finish(end: RunEnd, blockId: string): Promise<RunEnd> {
    try {
      await this.options.conversation.hangup();
    } catch (error) {
      this.emit('warning', { blockId, message: `hangup failed: ${error instanceof Error ? error.message : String(error)}` });
    }
    return end;
  }

  private async fail(blockId: string, message: string): Promise<RunEnd> {
    this.emit('error', { blockId, message });
    return this.finish({ reason: 'error', lastBlockId: blockId }, blockId);
  }

  private scope(): TemplateScope {
    const builtins = builtinVariables(this.options.context);
    return { lookup: (name) => (this.vars.has(name) ? this.vars.get(name) : builtins[name]) };
  }

  /**
   * `at` is a transcript index: an agent line is stored where it began, ahead of the caller
   * words recorded while it played (said over it, so ignored), not after them.
   */
  private record(entry: TranscriptEntry, at = this.transcript.length): void {
    this.transcript.splice(at, 0, entry);
    this.emit('utterance', entry);
  }

  /** The listening block the run goes back to when the caller speaks over a closing line, if it may. */
  private reopenTarget(current?: RunStep): RunStep | undefined {
    if (this.reopens >= maxReopens) return undefined;
    return this.steps.findLast((s) => s !== current && (s.type === 'smartAi' || s.type === 'ask'));
  }

  /**
   * Values of digit variables in a line, and what the block asked to spell: read one character at
   * a time. Without `text` (a streamed line, not known before it is spoken) every such value.
   */
  private spellOut(text: string | undefined, options: BlockSayOptions): Pick<SayOptions, 'spellOut'> {
    const values = [...this.digitVariables].map((name) => this.vars.get(name)).filter((v): v is string | number => (typeof v === 'string' || typeof v === 'number') && String(v) !== '');
    const spell = [...new Set([...values.map(String), ...(options.spellOut ?? [])])].filter((v) => text === undefined || text.includes(v));
    return spell.length > 0 ? { spellOut: spell } : {};
  }

  private contextFor(blockId: string): BlockContext {
    const { conversation, context, services, recipe } = this.options;
    const signal = this.signal;
    const carried = this.carried;
    this.carried = undefined;
    const warn = (message: string): void => {
      services.logger.warn({ blockId, callId: context.callId }, message);
      this.emit('warning', { blockId, message });
    };
    const reported = new Set<string>();
    const onMissing = (name: string): void => {
      if (reported.has(name)) return;
      reported.add(name);
      warn(`template variable '${name}' is not set; rendered as empty`);
    };
    return {
      blockId,
      call: context,
      global: recipe.globalSettings,
      services,
      signal,
      ...(carried ? { carried } : {}),
      canReopen: this.reopenTarget() !== undefined,
      say: async (text, options = {}) => {
        if (signal.aborted) throw new CallEndedError();
        if (text.trim() === '') return { interrupted: false };
        const [startedAt, index] = [context.now(), this.transcript.length];
        const result = await conversation.say(text, { bargeIn: options.bargeIn ?? true, signal, ...normalization(options), ...this.spellOut(text, options) });
        this.record({ at: startedAt, speaker: 'agent', text, blockId, ...(result.interrupted ? { interrupted: true, unspoken: result.unspoken } : {}) }, index);
        return result;
      },
      sayStream: conversation.sayStream
        ? async (pieces, options = {}) => {
            if (signal.aborted) throw new CallEndedError();
            const [startedAt, index] = [context.now(), this.transcript.length];
            const spell = this.spellOut(undefined, options);
            const result = await (conversation.sayStream as NonNullable<Conversation['sayStream']>).call(conversation, pieces, { bargeIn: options.bargeIn ?? true, signal, ...normalization(options), ...spell });
            if (result.text.trim() !== '') {
              this.record({ at: startedAt, speaker: 'agent', text: result.text, blockId, ...(result.interrupted ? { interrupted: true, unspoken: result.unspoken } : {}) }, index);
            }
            return result;
          }
        : undefined,
      listen: async (options = {}) => {
        if (signal.aborted) throw new CallEndedError();
        const heard = await conversation.listen({ signal, timeoutMs: options.timeoutMs ?? services.silenceTimeoutMs });
        if (heard.kind === 'utterance' && heard.text) this.record({ at: context.now(), speaker: 'caller', text: heard.text, blockId, ...(heard.confidence !== undefined ? { confidence: heard.confidence } : {}) });
        if (heard.kind === 'dtmf') this.record({ at: context.now(), speaker: 'caller', text: heard.digits, blockId, dtmf: true });
        return heard;
      },
      expect: (expectation) => conversation.expect?.(expectation),
      note: (turn) => {
        const note = { blockId, ...turn };
        this.steps[this.steps.length - 1]?.turns.push(note);
        this.emit('turn', note);
      },
      transfer: (target, bridgeMessage) => conversation.transfer(target, bridgeMessage, signal),
      render: (template, encode) => render(template, this.scope(), onMissing, encode),
      renderDeep: (value) => renderDeep(value, this.scope(), onMissing),
      getVariable: (name) => this.vars.get(name),
      lookup: (name) => resolve(this.scope(), name),
      setVariable: (name, value) => {
        this.vars.set(name, value);
        this.emit('variableSet', { blockId, name, value });
      },
      variables: () => this.variables(),
      history: () => this.transcript.filter((e) => !e.ignored).map((e): ChatMessage => ({ role: e.speaker === 'agent' ? 'assistant' : 'user', content: e.text })),
      today: () => localTime(context.now(), context.timezone).date,
      warn,
    };
  }
}
