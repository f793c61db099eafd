import { countAnsweredCall } from '../../../gateway/call/call-outcomes.js';
import { randomBytes, randomUUID } from 'node:crypto';
import type { Clock, TimerHandle } from '../../../core/clock.js';
import type { Logger } from '../../../core/logger.js';
import type { CallHandler, InboundCallInfo } from '../../../core/ports/call-handler.js';
import type { OriginateRequest, OriginateResult } from '../../../core/ports/originator.js';
import type { PacingScheduler } from '../../../media/rtp/pacing-scheduler.js';
import { StreamMediaSession } from '../../../media/stream/stream-media-session.js';
import type { CloudProviderType, ProviderNumber } from './provider-numbers.js';
import { StreamCall, type AttachedStream, type StreamCallControl } from './stream-call.js';

/** A campaign dial through a provider, waiting for its outcome. */
export interface PendingDial {
  readonly request: OriginateRequest;
  settle(result: OriginateResult): void;
  readonly settled: boolean;
}

/**
 * One provider call the platform knows by an unguessable token: the token is in every URL we
 * give the provider for the call (stream, status callback, stream-ended and transfer actions),
 * so those requests find the call, and a stream can only attach to a call we set up.
 */
export interface ProviderCallEntry {
  readonly token: string;
  readonly provider: CloudProviderType;
  readonly number: ProviderNumber;
  readonly direction: 'inbound' | 'outbound';
  /** Our number and the other party, E.164 (or what the provider sent as the caller). */
  readonly ours: string;
  readonly remote: string;
  /** The provider's id of the call (known for outbound calls once the REST API answered). */
  callSid: string | undefined;
  /** Set once the first stream started. */
  call: StreamCall | undefined;
  readonly dial: PendingDial | undefined;
  /** The callee answered (outbound: the provider fetched our instructions). */
  answered: boolean;
  /** Provider-specific state (e.g. a transfer in flight). */
  transfer: { readonly resolve: (ok: boolean, reason: string) => void } | undefined;
}

export interface ProviderCallsOptions {
  readonly clock: Clock;
  readonly logger: Logger;
  /** The shared 20 ms media clock (the gateway's MediaService scheduler). */
  readonly scheduler: PacingScheduler;
  /** Runs every answered call (the recipe runtime): inbound calls alone, campaign calls with their dial request. */
  readonly handler: CallHandler;
  /** A call whose stream does not start within this long is given up. */
  readonly streamStartTimeoutMs: number;
  /** A stream that dropped may reconnect within this long. */
  readonly reconnectGraceMs: number;
  /** Concurrent calls per number and per tenant (the SIP gateway's limits, `sip.maxCalls*`). */
  readonly maxCallsPerNumber: number;
  readonly maxCallsPerTenant: number;
  /** No caller audio for this long ends the call (`media.rtpTimeoutMs`); 0 never. */
  readonly mediaTimeoutMs: number;
}

/** Why a new call cannot be taken: the provider is told busy. */
export type Refusal = { readonly refused: true; readonly reason: string };

/**
 * The provider calls of this process: tokens, the pending stream-start deadline, concurrency
 * counts, and the step every provider shares once its stream has started: a StreamMediaSession
 * and a StreamCall, handed to the recipe runtime (inbound) or returned as the answered outcome
 * of the campaign dial (outbound). Reconnections and returns from a failed transfer attach the
 * new stream to the same call.
 */
export class ProviderCalls {
  private readonly entries = new Map<string, ProviderCallEntry>();
  private readonly byCallId = new Map<string, ProviderCallEntry>();
  private readonly perNumber = new Map<string, number>();
  private readonly perTenant = new Map<string, number>();
  private readonly startTimers = new Map<string, TimerHandle>();
  private readonly controls = new Map<string, () => StreamCallControl>();
  /** Calls ended recently: the provider's late callbacks about them are still verified and answered. */
  private readonly ended = new Map<string, { readonly number: ProviderNumber; readonly at: number; readonly sidKey: string | undefined }>();
  /** The same calls by the provider's call id (flow requests that carry no token of ours name the call by it). */
  private readonly endedBySid = new Map<string, string>();

  /** Set by a drain: new inbound calls are refused, live ones go on. */
  private draining = false;
  private readonly idleWaiters = new Set<() => void>();

  constructor(private readonly o: ProviderCallsOptions) {}

  get size(): number {
    return this.entries.size;
  }

  /** Refuses new inbound calls from now on (a drain); those already in hand go on. */
  refuseInbound(): void {
    this.draining = true;
  }

  /** Resolves once no call is in hand, or after `timeoutMs`; true when idle. */
  whenIdle(timeoutMs: number): Promise<boolean> {
    if (this.entries.size === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (idle: boolean): void => {
        this.idleWaiters.delete(onIdle);
        this.o.clock.clearTimeout(timer);
        resolve(idle);
      };
      const onIdle = (): void => done(true);
      const timer = this.o.clock.setTimeout(() => done(false), timeoutMs);
      this.idleWaiters.add(onIdle);
    });
  }

  /** Registers a call about to stream to us; an inbound one is refused at the concurrency limits. */
  open(init: Omit<ProviderCallEntry, 'token' | 'call' | 'answered' | 'transfer'>, control: (entry: ProviderCallEntry) => StreamCallControl): ProviderCallEntry | Refusal {
    const { number } = init;
    // A draining platform takes no new inbound call (the provider tells the caller busy); a
    // campaign call the worker already claimed is still placed (docs/operations.md).
    if (init.direction === 'inbound' && this.draining) return { refused: true, reason: 'the platform is draining for a restart' };
    // Campaign calls are paced by the campaign's own concurrency limits (docs/scheduler.md).
    if (init.direction === 'inbound' && (this.perNumber.get(number.id) ?? 0) >= this.o.maxCallsPerNumber) return { refused: true, reason: `number ${number.e164} is at its limit of ${this.o.maxCallsPerNumber} calls` };
    if (init.direction === 'inbound' && (this.perTenant.get(number.tenantId) ?? 0) >= this.o.maxCallsPerTenant) return { refused: true, reason: `the tenant is at its limit of ${this.o.maxCallsPerTenant} calls` };
    // An inbound call is answered by our instructions; an outbound one when the callee picks up.
    const entry: ProviderCallEntry = { ...init, token: randomBytes(18).toString('base64url'), call: undefined, answered: init.direction === 'inbound', transfer: undefined };
    this.entries.set(entry.token, entry);
    this.controls.set(entry.token, () => control(entry));
    bump(this.perNumber, number.id, 1);
    bump(this.perTenant, number.tenantId, 1);
    // Inbound calls start their stream right after our answer; outbound ones after ringing.
    if (init.direction === 'inbound') this.armStartTimer(entry);
    return entry;
  }

  get(token: string): ProviderCallEntry | undefined {
    return this.entries.get(token);
  }

  /**
   * The live call the provider knows by this id. A linear scan: only requests that carry no
   * token of ours (provider B's flow applets) need it, once or twice per call.
   */
  byProviderCallSid(provider: CloudProviderType, callSid: string): ProviderCallEntry | undefined {
    for (const entry of this.entries.values()) if (entry.provider === provider && entry.callSid === callSid) return entry;
    return undefined;
  }

  /** The number of a call of this provider that ended within the last few minutes, by the provider's call id. */
  recentlyEndedByCallSid(provider: CloudProviderType, callSid: string): ProviderNumber | undefined {
    const token = this.endedBySid.get(`${provider}:${callSid}`);
    return token === undefined ? undefined : this.ended.get(token)?.number;
  }

  /** The live call with this ActiveCall id (Transfer blocks address calls by it). */
  byCall(callId: string): ProviderCallEntry | undefined {
    return this.byCallId.get(callId);
  }

  /** The callee answered: the stream must start within the deadline. */
  markAnswered(entry: ProviderCallEntry): void {
    if (entry.answered) return;
    entry.answered = true;
    this.armStartTimer(entry);
  }

  /**
   * A stream of the call started. The first one creates the media session and the call and
   * hands it on; later ones (reconnection, return from a failed transfer) attach to it.
   */
  streamStarted(entry: ProviderCallEntry, stream: AttachedStream, remoteAddress: string, transport: string): StreamCall | undefined {
    if (!this.entries.has(entry.token)) {
      stream.close(1000, 'the call has ended');
      return undefined;
    }
    if (entry.call) {
      entry.call.streamStarted(stream);
      return entry.call;
    }
    this.disarmStartTimer(entry.token);
    const { number } = entry;
    const log = this.o.logger.child({ provider: entry.provider, callSid: entry.callSid });
    const media = new StreamMediaSession(this.o.scheduler, { mediaTimeoutMs: this.o.mediaTimeoutMs, logger: log });
    const info: InboundCallInfo = {
      id: randomUUID(),
      sipCallId: entry.callSid ?? entry.token,
      tenantId: number.tenantId,
      numberId: number.id,
      // Outbound calls reuse the inbound shape: `dialled` is the callee, `caller` our number.
      dialled: entry.direction === 'inbound' ? entry.ours : entry.remote,
      caller: entry.direction === 'inbound' ? entry.remote : entry.ours,
      trunkId: null,
      recipeId: entry.dial?.request.context.recipeId ?? number.recipeId,
      language: number.language,
      matchedBy: 'to',
      transport,
      remoteAddress,
      startedAt: this.o.clock.now(),
    };
    const control = this.controls.get(entry.token)?.() ?? { hangup: async () => undefined };
    const call = new StreamCall(
      info,
      media,
      { maxDurationMs: number.maxCallDurationMinutes * 60_000, silenceMs: number.endCallOnSilenceMinutes * 60_000, reconnectGraceMs: this.o.reconnectGraceMs },
      control,
      this.o.clock,
      log,
    );
    entry.call = call;
    entry.answered = true;
    this.byCallId.set(info.id, entry);
    call.streamStarted(stream);
    void call.ended.then((end) => {
      this.release(entry);
      countAnsweredCall(entry.direction, end.reason, end.durationMs);
    });
    log.info({ callId: info.id, direction: entry.direction, number: number.e164 }, 'provider call connected over its media stream');
    if (entry.dial) {
      const { request } = entry.dial;
      entry.dial.settle({ outcome: 'answered', sipStatus: 200, callId: info.id, answeredAt: info.startedAt, completion: call.ended });
      const onAbort = (): void => void call.hangup('aborted');
      request.signal.addEventListener('abort', onAbort, { once: true });
      void call.ended.then(() => request.signal.removeEventListener('abort', onAbort));
      this.run(call, request);
    } else {
      this.run(call);
    }
    return call;
  }

  /** A call that ended within the last few minutes (its number, to check the signature of a late callback). */
  recentlyEnded(token: string): ProviderNumber | undefined {
    return this.ended.get(token)?.number;
  }

  /** Forgets a call that ended, or one that never got its stream. */
  release(entry: ProviderCallEntry): void {
    if (!this.entries.delete(entry.token)) return;
    const now = this.o.clock.now();
    const sidKey = entry.callSid === undefined ? undefined : `${entry.provider}:${entry.callSid}`;
    this.ended.set(entry.token, { number: entry.number, at: now, sidKey });
    if (sidKey) this.endedBySid.set(sidKey, entry.token);
    for (const [token, e] of this.ended) {
      if (now - e.at < ENDED_KEPT_MS && this.ended.size <= ENDED_KEPT_MAX) break;
      this.ended.delete(token);
      if (e.sidKey && this.endedBySid.get(e.sidKey) === token) this.endedBySid.delete(e.sidKey);
    }
    this.controls.delete(entry.token);
    this.disarmStartTimer(entry.token);
    if (entry.call) this.byCallId.delete(entry.call.info.id);
    bump(this.perNumber, entry.number.id, -1);
    bump(this.perTenant, entry.number.tenantId, -1);
    if (this.entries.size === 0) for (const wake of [...this.idleWaiters]) wake();
  }

  /**
   * A call whose stream never got going (no stream in time, or a broken one before its `start`):
   * hung up at the provider so the caller is not left in silence, and a campaign dial fails.
   */
  giveUp(entry: ProviderCallEntry, reason: string): void {
    if (entry.call || !this.entries.has(entry.token)) return;
    const control = this.controls.get(entry.token)?.();
    this.release(entry);
    void control?.hangup().catch(() => undefined);
    entry.dial?.settle({ outcome: 'failed', reason });
  }

  /** Every call still up (shutdown hangs them up). */
  live(): StreamCall[] {
    return [...this.entries.values()].flatMap((e) => (e.call ? [e.call] : []));
  }

  /** Live calls by provider and direction, for /metrics. */
  liveByProvider(): Array<{ provider: CloudProviderType; direction: 'inbound' | 'outbound' }> {
    return [...this.entries.values()].flatMap((e) => (e.call ? [{ provider: e.provider, direction: e.direction }] : []));
  }

  /** Every call not yet streaming (shutdown settles their dials). */
  pending(): ProviderCallEntry[] {
    return [...this.entries.values()].filter((e) => !e.call);
  }

  private run(call: StreamCall, request?: OriginateRequest): void {
    void (async () => {
      try {
        await this.o.handler.handle(call, request);
      } catch (error) {
        this.o.logger.error({ err: error instanceof Error ? error.message : String(error), callId: call.info.id }, 'provider call handler failed: ending the call');
        await call.hangup('handler-error');
      }
    })();
  }

  private armStartTimer(entry: ProviderCallEntry): void {
    this.disarmStartTimer(entry.token);
    this.startTimers.set(
      entry.token,
      this.o.clock.setTimeout(() => {
        this.startTimers.delete(entry.token);
        if (entry.call || !this.entries.has(entry.token)) return;
        this.o.logger.warn({ provider: entry.provider, callSid: entry.callSid, ms: this.o.streamStartTimeoutMs }, 'the provider did not open the media stream in time: giving the call up');
        this.giveUp(entry, 'answered, but the media stream never started');
      }, this.o.streamStartTimeoutMs),
    );
  }

  private disarmStartTimer(token: string): void {
    const timer = this.startTimers.get(token);
    if (timer) this.o.clock.clearTimeout(timer);
    this.startTimers.delete(token);
  }
}

/** Late callbacks (the final status after our hang-up) come within seconds; a few minutes is plenty. */
const ENDED_KEPT_MS = 5 * 60_000;
const ENDED_KEPT_MAX = 10_000;

function bump(map: Map<string, number>, key: string, delta: number): void {
  const next = (map.get(key) ?? 0) + delta;
  if (next <= 0) map.delete(key);
  else map.set(key, next);
}

export const isRefusal = (value: ProviderCallEntry | Refusal): value is Refusal => 'refused' in value;
