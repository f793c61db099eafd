import { silentLogger } from '../../core/logger.js';
import type { AgentEngine } from '../../control-api/platform/llm/agent-engine.js';
import type { ChatMessage } from '../../control-api/platform/llm/chat-provider.js';
import { OfflineEngine } from '../../control-api/platform/llm/offline-engine.js';
import { globalSettingsSchema, type GlobalSettings } from '../../control-api/model/recipes/recipe-schema.js';
import type { BlockContext } from '../../control-api/features/recipes/runtime/block.js';
import { builtinVariables, localTime, type CallContext } from '../../control-api/features/recipes/runtime/call-context.js';
import { CallEndedError, type Heard, type ListenExpectation, type TransferResult } from '../../core/ports/conversation.js';
import type { TurnNote } from '../../control-api/features/recipes/runtime/run-events.js';
import type { HttpRequest, HttpResponse } from '../../control-api/platform/net/outbound-http.js';
import type { RuntimeServices } from '../../control-api/features/recipes/runtime/services.js';
import { render, renderDeep, resolve, type TemplateScope } from '../../control-api/features/recipes/runtime/templating.js';

/**
 * A BlockContext for unit-testing one block in isolation: scripted caller turns, recorded agent
 * lines, variables in a map, and services that default to inert recorders.
 */
export interface FakeContextOptions {
  readonly turns?: readonly (Heard | 'hangup')[];
  readonly variables?: Record<string, unknown>;
  readonly global?: Partial<GlobalSettings>;
  readonly services?: Partial<RuntimeServices>;
  readonly engine?: AgentEngine;
  readonly transfer?: TransferResult;
  readonly now?: number;
  /** Give the context streaming speech; each call's pieces are recorded in `streamed`. */
  readonly streaming?: boolean;
  /** Lines (by a substring) the caller cuts short: `say` reports them interrupted, all of them unspoken. */
  readonly interrupts?: readonly string[];
  /** Words said before the block asked anything (BlockContext.carried). */
  readonly carried?: Heard;
}

export interface FakeContext extends BlockContext {
  readonly said: { text: string; bargeIn: boolean; spellOut?: readonly string[] }[];
  readonly warnings: string[];
  readonly heard: Heard[];
  readonly transfers: { target: string; bridgeMessage: string }[];
  readonly vars: Map<string, unknown>;
  readonly httpRequests: HttpRequest[];
  readonly controller: AbortController;
  readonly streamed: { pieces: string[]; firstAt: number }[];
  readonly expectations: ListenExpectation[];
  readonly notes: Omit<TurnNote, 'blockId'>[];
}

export function fakeContext(options: FakeContextOptions = {}): FakeContext {
  const controller = new AbortController();
  const vars = new Map<string, unknown>(Object.entries(options.variables ?? {}));
  const said: { text: string; bargeIn: boolean; spellOut?: readonly string[] }[] = [];
  const warnings: string[] = [];
  const heard: Heard[] = [];
  const transfers: { target: string; bridgeMessage: string }[] = [];
  const httpRequests: HttpRequest[] = [];
  const history: ChatMessage[] = [];
  const turns = [...(options.turns ?? [])];
  const streamed: { pieces: string[]; firstAt: number }[] = [];
  const expectations: ListenExpectation[] = [];
  const notes: Omit<TurnNote, 'blockId'>[] = [];
  const call: CallContext = {
    callId: 'call-1',
    tenantId: 'tenant-1',
    tenantName: 'Acme',
    timezone: 'Asia/Kolkata',
    callerNumber: '+919812345678',
    calledNumber: '+918000000000',
    direction: 'simulation',
    campaignVariables: {},
    now: () => options.now ?? Date.UTC(2026, 10, 21, 6, 30),
  };
  const services: RuntimeServices = {
    engine: options.engine ?? new OfflineEngine(),
    http: {
      async request(_tenant, request): Promise<HttpResponse> {
        httpRequests.push(request);
        return { status: 200, headers: {}, body: '{}' };
      },
    },
    code: { run: async () => ({ ok: false, kind: 'runtime', error: 'no code runner in this fake' }) },
    webhooks: { send: async () => 200 },
    logger: silentLogger,
    silenceTimeoutMs: 1000,
    ...options.services,
  };
  const scope: TemplateScope = { lookup: (name) => (vars.has(name) ? vars.get(name) : builtinVariables(call)[name]) };
  const onMissing = (name: string): void => void warnings.push(`template variable '${name}' is not set`);
  return {
    blockId: 'block-under-test',
    call,
    global: globalSettingsSchema.parse(options.global ?? {}),
    services,
    signal: controller.signal,
    ...(options.carried ? { carried: options.carried } : {}),
    controller,
    said,
    warnings,
    heard,
    transfers,
    vars,
    httpRequests,
    streamed,
    expectations,
    notes,
    expect: (expectation) => void expectations.push(expectation),
    note: (turn) => void notes.push(turn),
    sayStream: options.streaming
      ? async (pieces, sayOptions = {}) => {
          const record = { pieces: [] as string[], firstAt: 0 };
          streamed.push(record);
          for await (const piece of pieces) {
            if (record.pieces.length === 0) record.firstAt = Date.now();
            record.pieces.push(piece);
          }
          const text = record.pieces.join('').trim();
          said.push({ text, bargeIn: sayOptions.bargeIn ?? true });
          history.push({ role: 'assistant', content: text });
          return { interrupted: false, text };
        }
      : undefined,
    async say(text, sayOptions = {}) {
      if (controller.signal.aborted) throw new CallEndedError();
      if (text.trim() === '') return { interrupted: false };
      said.push({ text, bargeIn: sayOptions.bargeIn ?? true, ...(sayOptions.spellOut ? { spellOut: sayOptions.spellOut } : {}) });
      history.push({ role: 'assistant', content: text });
      if (options.interrupts?.some((line) => text.includes(line))) return { interrupted: true, unspoken: text };
      return { interrupted: false };
    },
    async listen() {
      if (controller.signal.aborted) throw new CallEndedError();
      const next = turns.shift() ?? 'hangup';
      if (next === 'hangup') {
        controller.abort();
        throw new CallEndedError('caller hung up');
      }
      heard.push(next);
      if (next.kind === 'utterance') history.push({ role: 'user', content: next.text });
      return next;
    },
    async transfer(target, bridgeMessage) {
      transfers.push({ target, bridgeMessage });
      return options.transfer ?? { ok: true };
    },
    render: (template, encode) => render(template, scope, onMissing, encode),
    renderDeep: (value) => renderDeep(value, scope, onMissing),
    getVariable: (name) => vars.get(name),
    lookup: (name) => resolve(scope, name),
    setVariable: (name, value) => void vars.set(name, value),
    variables: () => Object.fromEntries(vars),
    history: () => [...history],
    today: () => localTime(call.now(), call.timezone).date,
    warn: (message) => void warnings.push(message),
  };
}

export const say = (text: string): Heard => ({ kind: 'utterance', text });
/** What a grammar-constrained recogniser reports: words, confidence, the meaning it heard, competing readings. */
export const heard = (text: string, confidence: number, meaning?: string, alternatives?: { text: string; confidence: number; scoreGap?: number }[]): Heard => ({
  kind: 'utterance',
  text,
  confidence,
  ...(meaning !== undefined ? { meaning } : {}),
  ...(alternatives ? { alternatives } : {}),
});
export const press = (digits: string): Heard => ({ kind: 'dtmf', digits });
export const silence: Heard = { kind: 'silence' };
