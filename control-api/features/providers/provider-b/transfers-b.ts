import type Router from '@koa/router';
import type Koa from 'koa';
import type { TimerHandle } from '../../../../core/clock.js';
import { AppError } from '../../../../core/errors.js';
import type { Logger } from '../../../../core/logger.js';
import type { CallTransferOutcome } from '../../../../core/ports/call-transfer.js';
import type { ProviderCallEntry, ProviderCalls } from '../provider-calls.js';
import type { CloudAccount } from '../provider-numbers.js';
import { accountB, validBasicAuthB } from './account.js';

export interface TransfersBOptions {
  readonly calls: ProviderCalls;
  readonly logger: Logger;
  /**
   * How long B's flow may take for one step of ours: to ask the Connect URL after our stream
   * closed, and to bring the caller back to the Voicebot applet after a failed dial.
   */
  readonly flowStepMs: number;
  /** How long the target rings (the Connect answer's `max_ringing_duration`). */
  readonly ringSeconds?: number;
}

/**
 * Where a transfer stands: our stream closed and B's flow is on its way to the Connect applet
 * (`handing-over`); the Connect applet asked us and dials the target (`dialling`); the dial
 * failed and the flow may bring the caller back to a Voicebot applet (`returning`).
 */
type Phase = 'handing-over' | 'dialling' | 'returning';

type Settlement =
  | { readonly kind: 'answered' }
  | { readonly kind: 'back'; readonly reason: string }
  | { readonly kind: 'ended'; readonly reason: string; readonly unconfirmed: boolean };

interface PendingTransfer {
  readonly target: string;
  phase: Phase;
  /** Why the dial failed, once the flow's Passthru said so. */
  failure: string | undefined;
  guard: TimerHandle | undefined;
  readonly settle: (s: Settlement) => void;
}

/** B's Call limits a call to 4 hours (Calls/connect `TimeLimit`): the longest a transferred conversation can last. */
const MAX_CONVERSATION_SECONDS = 14_400;
const E164 = /^\+[1-9]\d{5,14}$/;

/**
 * Transfers on provider B. Its Voicebot applet has no transfer instruction, but its flow goes on
 * to the next applet when our WebSocket closes, so a transfer is a flow the customer builds:
 *
 *   Voicebot -> Connect (dynamic URL: GET /providers/b/connect)
 *     both exits (after the conversation; nobody answered) -> Passthru (sync, GET /providers/b/transfer-ended)
 *       200 -> Voicebot (back to the agent), 302 -> Hangup
 *
 * The Transfer block closes our stream; the Connect applet asks whom to dial and we answer the
 * call's target (a call with no transfer gets an empty list, so the flow hangs up); the Passthru
 * says how the dial went (`CallType` completed / incomplete / client-hangup). B reports an
 * answered dial only when that conversation is over, so the call stays ours (`transferring`, the
 * AI's limits paused) until then. Every request names the call by `CallSid` and carries the
 * account's API key and token as Basic auth (docs/providers.md, "Provider B").
 */
export class TransfersB {
  private readonly pending = new Map<ProviderCallEntry, PendingTransfer>();

  constructor(private readonly o: TransfersBOptions) {}

  routes(router: Router): void {
    router.get('/connect', (ctx) => this.connect(ctx));
    router.get('/transfer-ended', (ctx) => this.transferEnded(ctx));
  }

  /** The Transfer block: hands the caller to B's Connect applet and waits for the flow to say how it went. */
  async transfer(entry: ProviderCallEntry, target: string, signal: AbortSignal): Promise<CallTransferOutcome> {
    const call = entry.call;
    if (!accountB(entry) || !call || !entry.callSid) return { ok: false, reason: 'the call is not connected' };
    if (entry.transfer || this.pending.has(entry)) return { ok: false, reason: 'a transfer is already under way' };
    // The Connect applet's dynamic answer lists phone numbers; a SIP target is refused while the caller is still with us.
    if (!E164.test(target)) return { ok: false, reason: `provider B's Connect applet dials phone numbers: ${target} is not an E.164 number` };
    let settle!: (s: Settlement) => void;
    const settled = new Promise<Settlement>((resolve) => (settle = resolve));
    const p: PendingTransfer = { target, phase: 'handing-over', failure: undefined, guard: undefined, settle };
    this.pending.set(entry, p);
    entry.transfer = { resolve: (ok, reason) => settle(ok ? { kind: 'answered' } : { kind: 'back', reason }) };
    const log = this.o.logger.child({ callSid: entry.callSid, callId: call.info.id });
    call.beginTransfer();
    // The Voicebot applet ends when our socket closes; the flow's next applet asks us whom to dial.
    call.releaseStream('transfer');
    log.info('transfer: our stream closed, waiting for the flow to ask whom to dial');
    this.arm(entry, p, this.o.flowStepMs, () => this.end(entry, p, 'transfer-failed', `provider B's flow did not ask whom to dial within ${this.o.flowStepMs} ms (no Connect applet with our dynamic URL after the Voicebot applet?)`));
    const aborted = new Promise<Settlement>((resolve) => {
      const onAbort = (): void => resolve({ kind: 'ended', reason: 'the call ended during the transfer', unconfirmed: p.phase === 'dialling' });
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    });
    const result = await Promise.race([settled, aborted]);
    if (p.guard) call.cancel(p.guard);
    this.pending.delete(entry);
    entry.transfer = undefined;
    log.info({ outcome: result.kind, ...(result.kind === 'answered' ? {} : { reason: result.reason }) }, 'transfer settled');
    if (result.kind === 'answered') {
      call.endTransfer(true);
      return { ok: true, method: 'provider' };
    }
    if (result.kind === 'back') call.endTransfer(false);
    return { ok: false, reason: result.reason, ...(result.kind === 'ended' && result.unconfirmed ? { unconfirmed: true } : {}) };
  }

  /**
   * The Voicebot applet asked for the stream of a call we hold: after a failed dial the flow
   * brought the caller back, so the block takes `failed` with the caller listening. Without a
   * transfer under way it is the same call's stream asked again (the stream reattaches).
   */
  callerBack(entry: ProviderCallEntry): void {
    const p = this.pending.get(entry);
    if (!p) return;
    p.settle({ kind: 'back', reason: p.failure ?? (p.phase === 'handing-over' ? "provider B's flow went back to the Voicebot applet without dialling the target" : 'the target did not answer') });
  }

  /**
   * B reports the call over (a campaign call's terminal status callback). True when a transfer
   * was under way and its outcome decided how the call ends.
   */
  callEnded(entry: ProviderCallEntry): boolean {
    const p = this.pending.get(entry);
    if (!p) return false;
    if (p.phase === 'dialling') this.end(entry, p, 'remote-bye', 'the call ended before provider B said whether the target answered (no Passthru after the Connect applet?)', true);
    else if (p.phase === 'returning') this.end(entry, p, 'transfer-failed', `${p.failure ?? 'the target did not answer'}; provider B's flow ended the call`);
    else this.end(entry, p, 'transfer-failed', "the call ended before provider B's flow asked whom to dial");
    return true;
  }

  /** The Connect applet's dynamic URL (GET, `CallSid`): the call's transfer target, or nobody. */
  private async connect(ctx: Koa.Context): Promise<void> {
    const { entry } = this.callOf(ctx);
    const p = entry && this.pending.get(entry);
    ctx.type = 'application/json';
    if (!entry || !p || p.phase !== 'handing-over') {
      // B's flow left the Voicebot applet of a call whose stream we lost: it will not come back.
      if (entry?.call?.state === 'reconnecting') void entry.call.hangup('stream-lost');
      // Nobody to dial: the Connect applet takes its not-answered exit and the flow hangs up.
      ctx.body = { fetch_after_attempt: false, destination: { numbers: [] } };
      return;
    }
    p.phase = 'dialling';
    const ringSeconds = this.o.ringSeconds ?? 30;
    // The Passthru after the Connect applet reports the outcome; an answered one only when that
    // conversation is over, which B cuts at MAX_CONVERSATION_SECONDS.
    this.arm(entry, p, (ringSeconds + MAX_CONVERSATION_SECONDS + 60) * 1000, () => this.end(entry, p, 'remote-bye', 'provider B never reported how the transfer went', true));
    ctx.body = {
      fetch_after_attempt: false,
      destination: { numbers: [p.target] },
      outgoing_phone_number: entry.ours,
      max_ringing_duration: ringSeconds,
      max_conversation_duration: MAX_CONVERSATION_SECONDS,
    };
  }

  /**
   * The Passthru after the Connect applet (GET, `CallSid`, `CallType`, and `DialCallStatus`
   * when B sends it). A sync Passthru goes on by our status: 200 back to the agent (a failed
   * transfer of a call still ours), 302 to the flow's Hangup (everything else).
   */
  private async transferEnded(ctx: Koa.Context): Promise<void> {
    const { entry } = this.callOf(ctx);
    const p = entry && this.pending.get(entry);
    const callType = one(ctx, 'CallType');
    const dialStatus = one(ctx, 'DialCallStatus');
    // No Location: the Passthru reads 302 as its second choice and must not follow it anywhere.
    if (!entry || !p) {
      ctx.status = 302;
      return;
    }
    if (callType === 'completed' || dialStatus === 'completed') {
      // 302 (Hangup) even here: one Passthru on both of the Connect applet's exits must not send a
      // caller whose conversation with the target is over back to the Voicebot applet.
      ctx.status = 302;
      return p.settle({ kind: 'answered' });
    }
    if (callType === 'client-hangup') {
      ctx.status = 302;
      return this.end(entry, p, 'remote-bye', 'the caller hung up while the target rang');
    }
    p.phase = 'returning';
    p.failure = `the target ${dialStatus && dialStatus !== 'completed' ? `was ${dialStatus}` : 'did not answer'} (provider B: ${callType ?? 'no CallType'})`;
    // The flow may bring the caller back (a Voicebot applet after this Passthru) or hang up.
    this.arm(entry, p, this.o.flowStepMs, () => this.end(entry, p, 'transfer-failed', `${p.failure}; provider B's flow ended the call`));
    ctx.status = 200;
  }

  /**
   * Ends the call with `endReason` and settles the transfer. The call's signal aborts first, so
   * the recipe is not led down its `failed` exit to talk to a caller who is gone.
   */
  private end(entry: ProviderCallEntry, p: PendingTransfer, endReason: string, reason: string, unconfirmed = false): void {
    p.settle({ kind: 'ended', reason, unconfirmed });
    entry.call?.providerEnded(endReason);
  }

  private arm(entry: ProviderCallEntry, p: PendingTransfer, ms: number, fire: () => void): void {
    const call = entry.call;
    if (!call) return;
    if (p.guard) call.cancel(p.guard);
    p.guard = call.after(ms, () => {
      if (this.pending.get(entry) === p) fire();
    });
  }

  /**
   * The call a flow request names by `CallSid` (live, or ended within minutes), authenticated
   * with the number's API key and token: 400 without CallSid, 404 unknown, 403 wrong credentials.
   */
  private callOf(ctx: Koa.Context): { entry?: ProviderCallEntry } {
    const callSid = one(ctx, 'CallSid');
    if (!callSid) throw new AppError('invalid_argument', 'the request is missing CallSid', { issues: [{ path: 'CallSid', message: 'CallSid is required' }] });
    const entry = this.o.calls.byProviderCallSid('providerB', callSid);
    const account: CloudAccount<'providerB'> | undefined = accountB(entry) ?? accountB(this.o.calls.recentlyEndedByCallSid('providerB', callSid));
    if (!account) throw new AppError('not_found', 'no such call');
    if (!validBasicAuthB(account, ctx.get('Authorization') || undefined)) {
      this.o.logger.warn({ path: ctx.path }, 'flow request refused: wrong or missing basic auth');
      throw new AppError('permission_denied', 'the API key and token do not match');
    }
    return entry ? { entry } : {};
  }
}

function one(ctx: Koa.Context, name: string): string | undefined {
  const v = ctx.query[name];
  return typeof v === 'string' && v !== '' ? v : undefined;
}
