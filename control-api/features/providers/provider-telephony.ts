import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import Koa from 'koa';
import type { Clock } from '../../../core/clock.js';
import type { Logger } from '../../../core/logger.js';
import type { CallTransfer, CallTransferOutcome } from '../../../core/ports/call-transfer.js';
import type { OriginateRequest, OriginateResult, Originator } from '../../../core/ports/originator.js';
import type { PacingScheduler } from '../../../media/rtp/pacing-scheduler.js';
import type { SecretBox } from '../../platform/crypto/secret-box.js';
import type { HttpSettings } from '../../../core/config/schema.js';
import { jsonErrors } from '../../platform/http/error-response.js';
import { serve, type RunningServer } from '../../platform/http/serve.js';
import { requestLog } from '../../platform/http/request-log.js';
import type { SealedNumbers } from '../../model/resources/definitions/lookups.js';
import { ProviderA } from './provider-a/provider-a.js';
import { ProviderARest } from './provider-a/rest-client.js';
import { ProviderB } from './provider-b/provider-b.js';
import { ProviderBRest } from './provider-b/rest-client.js';
import { ProviderC } from './provider-c/provider-c.js';
import { ProviderCRest } from './provider-c/rest-client.js';
import type { ProviderAdapter } from './provider-adapter.js';
import type { CallHandler } from '../../../core/ports/call-handler.js';
import { ProviderCalls } from './provider-calls.js';
import { PublicUrls, refuseUpgrade } from './provider-http.js';
import type { ProviderEndpoint } from './provider-adapter.js';
import { ProviderNumbers, type CloudProviderType } from './provider-numbers.js';
import { countMediaStream, countWebhook, watchProviderCalls } from './provider-metrics.js';

export interface ProviderTelephonyOptions {
  /** The phone numbers as stored (the model floor's lookup); provider secrets are opened here with `box`. */
  readonly numbers: SealedNumbers;
  readonly box: SecretBox;
  readonly logger: Logger;
  readonly clock: Clock;
  /** The gateway's 20 ms media clock, shared with RTP sessions. */
  readonly scheduler: PacingScheduler;
  /** The recipe runtime (RecipeCallHandler). */
  readonly handler: CallHandler;
  /** Where providers reach this process (config `providers.publicBaseUrl`); default `http://<advertisedHost>:<bound port>`. */
  readonly publicBaseUrl?: string;
  /** The host of the default public base URL (the gateway's advertised address). */
  readonly advertisedHost: string;
  /** Each provider's REST API base (config `providers.<type>.apiBaseUrl`). */
  readonly apiBaseUrls: { readonly providerA: string; readonly providerB?: string; readonly providerC: string };
  readonly streamStartTimeoutMs: number;
  readonly reconnectGraceMs: number;
  readonly mediaTimeoutMs: number;
  readonly maxCallsPerNumber: number;
  readonly maxCallsPerTenant: number;
}

/**
 * Cloud telephony providers in one place: the shared call registry, each provider's adapter
 * (webhooks, media stream, REST), the HTTP app and WebSocket upgrades the provider listener
 * serves, the Originator for campaign calls from provider numbers, and the Transfer action for
 * calls that came through a provider. The gateway role composes it (bin/roles/gateway.ts).
 */
export class ProviderTelephony implements CallTransfer {
  readonly calls: ProviderCalls;
  readonly numbers: ProviderNumbers;
  readonly urls = new PublicUrls();
  private readonly adapters: ReadonlyMap<CloudProviderType, ProviderAdapter & ProviderEndpoint>;

  constructor(private readonly o: ProviderTelephonyOptions) {
    this.numbers = new ProviderNumbers(o.numbers, o.box);
    this.calls = new ProviderCalls({
      clock: o.clock,
      logger: o.logger,
      scheduler: o.scheduler,
      handler: o.handler,
      streamStartTimeoutMs: o.streamStartTimeoutMs,
      reconnectGraceMs: o.reconnectGraceMs,
      mediaTimeoutMs: o.mediaTimeoutMs,
      maxCallsPerNumber: o.maxCallsPerNumber,
      maxCallsPerTenant: o.maxCallsPerTenant,
    });
    const urls = this.urls;
    const shared = { calls: this.calls, numbers: this.numbers, urls, startTimeoutMs: o.streamStartTimeoutMs };
    this.adapters = new Map<CloudProviderType, ProviderAdapter & ProviderEndpoint>([
      ['providerA', new ProviderA({ ...shared, rest: new ProviderARest(o.apiBaseUrls.providerA), logger: o.logger.child({ provider: 'providerA' }) })],
      ['providerB', new ProviderB({ ...shared, rest: new ProviderBRest(o.apiBaseUrls.providerB), logger: o.logger.child({ provider: 'providerB' }) })],
      ['providerC', new ProviderC({ ...shared, rest: new ProviderCRest(o.apiBaseUrls.providerC), logger: o.logger.child({ provider: 'providerC' }) })],
    ]);
    this.unwatch = watchProviderCalls({ live: () => this.calls.liveByProvider() });
  }

  private readonly unwatch: () => void;

  /** The webhook app the provider listener serves (mount nothing else on it). */
  app(): Koa {
    const app = new Koa();
    app.proxy = false;
    app.silent = true;
    app.use(requestLog('providers', this.o.logger));
    app.use(async (ctx, next) => {
      try {
        await next();
      } finally {
        countWebhook(this.providerOf(ctx.path), ctx.status);
      }
    });
    app.use(jsonErrors(this.o.logger));
    for (const adapter of this.adapters.values()) app.use(adapter.router.routes()).use(adapter.router.allowedMethods());
    return app;
  }

  /** Starts the provider listener: webhooks over HTTP, media streams as WebSocket upgrades on the same port. */
  async listen(host: string, port: number, http?: HttpSettings): Promise<RunningServer> {
    const running = await serve(this.app(), host, port, { name: 'provider webhooks', ...(http ? { http } : {}) });
    running.server.on('upgrade', this.upgrade);
    const shown = this.o.advertisedHost.includes(':') ? `[${this.o.advertisedHost}]` : this.o.advertisedHost;
    this.urls.set(this.o.publicBaseUrl ?? `http://${shown}:${running.port}`);
    return running;
  }

  /** The base URL providers are given (and sign requests with). */
  get publicBaseUrl(): string {
    return this.urls.http;
  }

  /** WebSocket upgrades of the provider listener: each provider's media streams. */
  readonly upgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const provider = this.providerOf(path);
    const adapter = provider && this.adapters.get(provider);
    countMediaStream(provider, adapter ? 'accepted' : 'refused');
    if (adapter) return adapter.stream.upgrade(req, socket, head);
    refuseUpgrade(socket, 404, 'no media stream endpoint here');
  };

  /** The provider whose prefix a path is under. */
  private providerOf(path: string): CloudProviderType | undefined {
    for (const [type, adapter] of this.adapters) if (path.startsWith(`${adapter.prefix}/`)) return type;
    return undefined;
  }

  /** A campaign call from a number on a cloud provider. */
  async originate(request: OriginateRequest): Promise<OriginateResult> {
    const number = await this.numbers.byId(request.from.phoneNumberId);
    const adapter = number && this.adapters.get(number.account.type);
    if (!number || !adapter) {
      return { outcome: 'failed', sipStatus: 503, reason: `number ${request.from.e164} has no usable cloud provider account (removed, or its credentials are incomplete)` };
    }
    return adapter.originate(request, number);
  }

  /** Whether the call (ActiveCall id) came through a provider: then its transfer is the provider's. */
  owns(callId: string): boolean {
    return this.calls.byCall(callId) !== undefined;
  }

  async transfer(callId: string, target: string, signal: AbortSignal): Promise<CallTransferOutcome> {
    const entry = this.calls.byCall(callId);
    const adapter = entry && this.adapters.get(entry.provider);
    if (!entry || !adapter) return { ok: false, reason: 'the call is no longer up' };
    return adapter.transfer(entry, target, signal);
  }

  /** Shutdown: live calls are hung up at their provider, dials waiting for an answer fail, streams close. */
  /**
   * A drain: inbound webhooks are answered busy from now on, and the live calls may end on their
   * own for up to `timeoutMs` (then `stop` hangs them up). True when none was left.
   */
  drain(timeoutMs: number): Promise<boolean> {
    this.calls.refuseInbound();
    return this.calls.whenIdle(timeoutMs);
  }

  async stop(graceMs: number): Promise<void> {
    for (const entry of this.calls.pending()) this.calls.giveUp(entry, 'the platform is shutting down');
    const live = this.calls.live();
    await Promise.race([Promise.allSettled(live.map((call) => call.hangup('shutdown'))), new Promise((r) => setTimeout(r, graceMs).unref())]);
    for (const adapter of this.adapters.values()) adapter.stream.close();
    this.unwatch();
  }
}

/**
 * The campaign scheduler's Originator: numbers on a cloud provider dial through it, every other
 * number (custom SIP trunk, native stack) through the SIP originator.
 */
export class RoutingOriginator implements Originator {
  constructor(
    private readonly sip: Originator,
    private readonly providers: ProviderTelephony,
  ) {}

  async originate(request: OriginateRequest): Promise<OriginateResult> {
    if (request.from.sipTrunkId) return this.sip.originate(request);
    const provider = await this.providers.numbers.providerOf(request.from.phoneNumberId);
    if (provider === 'providerA' || provider === 'providerB' || provider === 'providerC') return this.providers.originate(request);
    return this.sip.originate(request);
  }
}
