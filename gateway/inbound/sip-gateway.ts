import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import type { CallDirectory } from '../../core/ports/call-directory.js';
import type { CallHandler } from '../../core/ports/call-handler.js';
import type { MediaPort } from '../../core/ports/media.js';
import type { SrtpRelay } from '../../core/ports/srtp-relay.js';
import type { WebCallAuthority, WebRtcBridge } from '../../core/ports/web-call.js';
import { watchGateway } from '../call/call-metrics.js';
import { CallRegistry } from '../call/call-registry.js';
import type { TimerValues } from '../sip/transaction/timers.js';
import type { ReceiveGate } from '../sip/transport/receive-gate.js';
import { TransportSet, type TransportSetOptions } from '../sip/transport/transport-set.js';
import type { UdpTransport } from '../sip/transport/udp.js';
import { DEFAULT_SESSION_TIMER, type SessionTimerPolicy } from '../sip/dialog/session-timer.js';
import { SipStack, type GuardVerdict } from '../sip/ua/sip-stack.js';
import { StoppableClock } from '../sip/ua/stoppable-clock.js';
import type { AbuseGuard, AbuseGuardOptions } from './abuse-guard.js';
import { buildAdmission, type AdmissionOptions, type ReceiveQueueOptions } from './admission.js';
import type { LoopLagMonitor } from './loop-lag.js';
import { EdgeSources } from './edge-source.js';
import { inviteSteps } from './invite-steps.js';
import type { RegisteredContacts } from './registered-steps.js';
import { MethodRouter } from './method-router.js';

export interface SipGatewayOptions {
  readonly transports: TransportSetOptions;
  readonly directory: CallDirectory;
  readonly media: MediaPort;
  readonly callHandler: CallHandler;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly publicAddress?: string;
  readonly timers?: Partial<TimerValues>;
  readonly trustedSources?: readonly string[];
  /** The SIP edge's addresses: when given, calls are taken only through it (docs/edge.md). */
  readonly edgeAddresses?: readonly string[];
  /** Multicast groups a Via maddr may direct responses to (RFC 3261 sec. 18.2.2; see maddr-policy.ts). */
  readonly maddrMulticast?: readonly string[];
  readonly maxCallsPerNumber?: number;
  readonly maxCallsPerTenant?: number;
  readonly ringMs?: number;
  /** RFC 4028 session timers (default 1800 s, Min-SE 90 s). */
  readonly sessionTimer?: SessionTimerPolicy;
  readonly abuse?: Omit<AbuseGuardOptions, 'clock' | 'concurrentCalls' | 'liveDialog' | 'capacity' | 'retransmission'>;
  /** New calls by the node's capacity (admission.ts); without it only sources are limited. */
  readonly admission?: AdmissionOptions;
  /** The receive lanes: new INVITEs waiting per source, handed on per round, and their longest wait. */
  readonly receiveQueue?: ReceiveQueueOptions;
  /** Web calls from browsers (invite's web chain, web-call-steps.ts); absent: call tokens are refused 403. */
  readonly web?: { readonly authority: WebCallAuthority; readonly bridge: WebRtcBridge };
  /** Trunks registered with their carriers: INVITEs to their Contacts are theirs (registered-steps.ts). */
  readonly registered?: RegisteredContacts;
  /** SDES-SRTP for trunks with `srtp` optional/required (rtpengine); absent: SRTP offers are refused 488. */
  readonly srtp?: SrtpRelay;
}

/** How a drain ended. */
export interface DrainResult {
  /** Calls still up at the drain timeout, ended with BYE (reason `drain-timeout`). */
  readonly endedAtTimeout: number;
  /** Milliseconds from the start of the drain until no call was left. */
  readonly ms: number;
}

/** What the stack's guard reads of the gateway's drain (one object shared with it, set before start returns). */
interface DrainFlag {
  since: number | undefined;
}

/**
 * The inbound SIP gateway: transports, the stack, the per-method router (INVITE steps, OPTIONS for
 * trunk keep-alives) and the live calls. Outbound origination hangs off the same stack.
 */
export class SipGateway {
  private draining: Promise<DrainResult> | undefined;
  private readonly unwatch: () => void;

  private constructor(
    readonly stack: SipStack,
    readonly transports: TransportSet,
    readonly registry: CallRegistry,
    readonly guard: AbuseGuard,
    private readonly clock: StoppableClock,
    private readonly drainFlag: DrainFlag,
    private readonly admission: { readonly lag: LoopLagMonitor | undefined; readonly loopLagMs: (() => number) | undefined; readonly gate: ReceiveGate },
  ) {
    const udp = transports.get('UDP') as UdpTransport | undefined;
    this.unwatch = watchGateway({
      registry,
      get draining() {
        return drainFlag.since !== undefined;
      },
      receiveQueue: () => admission.gate.waiting,
      ...(admission.loopLagMs ? { loopLagMs: admission.loopLagMs } : {}),
      ...(udp ? { udpDrops: () => udp.kernelDrops } : {}),
    });
  }

  static async start(options: SipGatewayOptions): Promise<SipGateway> {
    const logger = options.logger;
    const clock = new StoppableClock(options.clock);
    const stack = new SipStack({
      clock,
      logger,
      ...(options.timers ? { timers: options.timers } : {}),
      ...(options.publicAddress ? { publicAddress: options.publicAddress } : {}),
      // Session timers are the one option tag we implement as UAS (RFC 4028 sec. 9: Require: timer).
      supported: ['timer'],
      ...(options.maddrMulticast ? { maddrMulticast: options.maddrMulticast } : {}),
    });
    const registry = new CallRegistry();
    const edge = new EdgeSources(options.edgeAddresses ?? []);
    const admission = buildAdmission({
      clock: options.clock,
      stack,
      registry,
      edge,
      ...(options.abuse ? { abuse: options.abuse } : {}),
      ...(options.admission ? { admission: options.admission } : {}),
      ...(options.receiveQueue ? { receiveQueue: options.receiveQueue } : {}),
    });
    const { guard, gate } = admission;
    const retryAfterSeconds = guard.retryAfterSeconds;
    const drainFlag: DrainFlag = { since: undefined };
    // RFC 3261 sec. 21.5.4: 503 + Retry-After tells a proxy or carrier to send elsewhere; OPTIONS
    // keep-alives get it too, so a dispatcher marks this node down while its calls finish.
    const drainRefusal: GuardVerdict = { action: 'reject', status: 503, headers: [['Retry-After', String(retryAfterSeconds)]], why: 'draining' };
    const router = new MethodRouter(logger);
    router.use(
      'INVITE',
      ...inviteSteps({
        host: stack,
        directory: options.directory,
        media: options.media,
        callHandler: options.callHandler,
        registry,
        guard,
        clock,
        logger,
        trustedSources: new Set(options.trustedSources ?? []),
        edge,
        maxCallsPerNumber: options.maxCallsPerNumber ?? 100,
        maxCallsPerTenant: options.maxCallsPerTenant ?? 500,
        ringMs: options.ringMs ?? 0,
        retryAfterSeconds,
        sessionTimer: options.sessionTimer ?? DEFAULT_SESSION_TIMER,
        ...(options.web ? { web: options.web } : {}),
        ...(options.registered ? { registered: options.registered } : {}),
        ...(options.srtp ? { srtp: options.srtp } : {}),
      }),
    );
    // Trunk keep-alives (RFC 3261 sec. 11): answered whoever asks, so carriers see us up.
    router.use('OPTIONS', async (sreq) => stack.answerOptions(sreq));
    stack.onRequest(router.handle);
    stack.setGuard((req, flow) => (drainFlag.since !== undefined && (req.method === 'INVITE' || req.method === 'OPTIONS') ? drainRefusal : guard.verdict(req, flow)));
    let transports: TransportSet;
    try {
      transports = await TransportSet.start({ ...options.transports, gate }, stack.receive);
    } catch (error) {
      admission.lag?.stop();
      throw error;
    }
    stack.attach(transports);
    return new SipGateway(stack, transports, registry, guard, clock, drainFlag, admission);
  }

  get ports(): TransportSet['ports'] {
    return this.transports.ports;
  }

  get isDraining(): boolean {
    return this.drainFlag.since !== undefined;
  }

  /**
   * Drain (docs/operations.md): from now on new INVITEs and out-of-dialog OPTIONS are answered 503
   * with Retry-After, statelessly, while calls already up (and INVITEs already being set up) go on,
   * as do requests inside their dialogs. Resolves once no call is left and every call handler has
   * finished (records written), or at `timeoutMs`, when the calls still up get a BYE (reason
   * `drain-timeout`) and are waited for up to `graceMs` more. Calling it again returns the same drain.
   */
  drain(timeoutMs: number, graceMs = 10_000): Promise<DrainResult> {
    this.draining ??= (async () => {
      const started = this.clock.now();
      this.drainFlag.since = started;
      const timedOut = !(await this.idleWithin(timeoutMs));
      let endedAtTimeout = 0;
      if (timedOut) {
        const calls = [...this.registry.all()];
        endedAtTimeout = calls.length;
        await Promise.allSettled(calls.map((c) => c.hangup('drain-timeout')));
        await this.idleWithin(graceMs);
      }
      return { endedAtTimeout, ms: this.clock.now() - started };
    })();
    return this.draining;
  }

  /** True when the registry became idle within `ms`. */
  private idleWithin(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = this.clock.setTimeout(() => resolve(false), ms);
      void this.registry.whenIdle().then(() => {
        this.clock.clearTimeout(timer);
        resolve(true);
      });
    });
  }

  /** Stops taking calls: BYE to every live call (bounded by `graceMs`), then closes the transports. */
  async stop(graceMs = 2000): Promise<void> {
    this.drainFlag.since ??= this.clock.now();
    const byes = [...this.registry.all()].map((c) => c.hangup('shutdown'));
    await Promise.race([Promise.allSettled(byes), new Promise((resolve) => setTimeout(resolve, graceMs).unref())]);
    await this.transports.close();
    this.clock.stop();
    this.admission.lag?.stop();
    this.unwatch();
  }
}
