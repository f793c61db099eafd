import { randomUUID } from 'node:crypto';
import { AppError, notFound } from '../../../../core/errors.js';
import { defaultBlocks } from '../blocks/index.js';
import type { Recipe } from '../../../model/recipes/recipe-schema.js';
import type { CallContext } from '../runtime/call-context.js';
import { RecipeRun, type RunResult } from '../runtime/recipe-run.js';
import type { RunEnd, TranscriptEntry } from '../runtime/run-events.js';
import type { RuntimeServices } from '../runtime/services.js';
import { TextConversation, type CallerTurn } from '../runtime/text-conversation.js';

/**
 * Turn-by-turn text conversations with a recipe, for the dashboard's "test your agent" panel
 * over HTTP. Each session is a RecipeRun on a TextConversation whose caller turns arrive through
 * `turn()`; every call returns what the agent said since the previous one. Idle sessions expire.
 */
export interface SessionView {
  readonly id: string;
  readonly status: 'awaitingInput' | 'ended';
  /** Agent lines spoken since the previous request. */
  readonly agent: readonly string[];
  readonly end?: RunEnd;
  readonly variables: Readonly<Record<string, unknown>>;
  readonly path: readonly string[];
  readonly warnings: readonly string[];
}

export interface SessionDetail extends SessionView {
  readonly transcript: readonly TranscriptEntry[];
}

export interface SimulationSessionsOptions {
  readonly idleTimeoutMs?: number;
  readonly maxPerTenant?: number;
  /** How long a request waits for the agent to reach its next question. */
  readonly turnTimeoutMs?: number;
}

interface Session {
  readonly id: string;
  readonly tenantId: string;
  readonly run: RecipeRun;
  readonly conversation: TextConversation;
  readonly pendingOutput: string[];
  readonly warnings: string[];
  readonly finished: Promise<RunResult>;
  result?: RunResult;
  waitingForCaller?: (turn: CallerTurn) => void;
  onAwaiting?: () => void;
  idleTimer?: NodeJS.Timeout;
}

export class SimulationSessions {
  private readonly sessions = new Map<string, Session>();

  constructor(private readonly options: SimulationSessionsOptions = {}) {}

  async start(tenantId: string, recipe: Recipe, context: CallContext, services: RuntimeServices): Promise<SessionView> {
    const open = [...this.sessions.values()].filter((s) => s.tenantId === tenantId && !s.result).length;
    if (open >= (this.options.maxPerTenant ?? 20)) throw new AppError('resource_exhausted', 'too many open simulations for this tenant; end one first');
    const pendingOutput: string[] = [];
    const warnings: string[] = [];
    // The conversation needs the session and the session needs the conversation: a late-bound slot.
    const slot: { session?: Session } = {};
    const conversation = new TextConversation({
      onSay: (text) => void pendingOutput.push(text),
      nextTurn: () =>
        new Promise<CallerTurn>((resolve) => {
          const current = slot.session;
          if (!current) return resolve({ kind: 'hangup' });
          current.waitingForCaller = resolve;
          current.onAwaiting?.();
        }),
    });
    const run = new RecipeRun({ recipe, conversation, context, services, blocks: defaultBlocks });
    run.on('warning', (w) => void warnings.push(`${w.blockId}: ${w.message}`));
    run.on('error', (e) => void warnings.push(`${e.blockId}: ERROR ${e.message}`));
    const id = randomUUID();
    const finished = run.run();
    const session: Session = { id, tenantId, run, conversation, pendingOutput, warnings, finished };
    slot.session = session;
    void finished.then((result) => {
      session.result = result;
      session.onAwaiting?.();
    });
    this.sessions.set(id, session);
    await this.settle(session);
    return this.view(session);
  }

  async turn(tenantId: string, id: string, turn: CallerTurn): Promise<SessionView> {
    const session = this.get(tenantId, id);
    if (session.result) throw new AppError('failed_precondition', 'this simulated call has ended');
    const deliver = session.waitingForCaller;
    if (!deliver) throw new AppError('aborted', 'the agent is still speaking; retry the turn');
    session.waitingForCaller = undefined;
    deliver(turn);
    await this.settle(session);
    return this.view(session);
  }

  detail(tenantId: string, id: string): SessionDetail {
    const session = this.get(tenantId, id);
    return { ...this.view(session, false), transcript: [...session.run.transcript] };
  }

  async end(tenantId: string, id: string): Promise<void> {
    const session = this.get(tenantId, id);
    this.drop(session);
    await session.finished;
  }

  async closeAll(): Promise<void> {
    const all = [...this.sessions.values()];
    for (const session of all) this.drop(session);
    await Promise.all(all.map((s) => s.finished));
  }

  private get(tenantId: string, id: string): Session {
    const session = this.sessions.get(id);
    // Another tenant's session answers exactly like a missing one.
    if (!session || session.tenantId !== tenantId) throw notFound(`simulation "${id}"`);
    this.touch(session);
    return session;
  }

  private drop(session: Session): void {
    clearTimeout(session.idleTimer);
    this.sessions.delete(session.id);
    session.run.hangup();
    session.waitingForCaller?.({ kind: 'hangup' });
  }

  private touch(session: Session): void {
    clearTimeout(session.idleTimer);
    session.idleTimer = setTimeout(() => this.drop(session), this.options.idleTimeoutMs ?? 10 * 60_000);
    session.idleTimer.unref();
  }

  /** Waits until the agent asks for the caller's next turn or the run ends. */
  private async settle(session: Session): Promise<void> {
    if (session.result || session.waitingForCaller) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, this.options.turnTimeoutMs ?? 30_000);
      session.onAwaiting = () => {
        clearTimeout(timer);
        session.onAwaiting = undefined;
        resolve();
      };
    });
    this.touch(session);
  }

  private view(session: Session, drain = true): SessionView {
    const agent = drain ? session.pendingOutput.splice(0) : [];
    const result = session.result;
    return {
      id: session.id,
      status: result ? 'ended' : 'awaitingInput',
      agent,
      ...(result ? { end: { reason: result.reason, disposition: result.disposition, transferTarget: result.transferTarget, lastBlockId: result.lastBlockId, lastExit: result.lastExit } } : {}),
      variables: session.run.variables(),
      path: [...session.run.path],
      warnings: [...session.warnings],
    };
  }
}
