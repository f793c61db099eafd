import { systemClock } from '../../core/clock.js';
import { advertisedSipAddress } from '../../core/config/advertised-address.js';
import { availableParallelism } from 'node:os';
import type { SipAbuseSettings, SipAdmissionSettings } from '../../core/config/schema.js';
import { CallRecorder } from '../../control-api/features/calls/call-recorder.js';
import { recordingsFor } from '../../control-api/features/calls/recordings.js';
import { RecipeCallHandler } from '../../control-api/features/gateway-adapters/recipe-call-handler.js';
import { QuickJsCodeRunner } from '../../control-api/features/recipes/code-sandbox/quickjs-code-runner.js';
import { platformServices } from '../../control-api/features/recipes/platform-services.js';
import { StoreCallDirectory } from '../../control-api/features/gateway-adapters/store-call-directory.js';
import { StoreTrunkRoutes } from '../../control-api/features/gateway-adapters/store-trunk-routes.js';
import { StoreTrunkRegistrations } from '../../control-api/features/gateway-adapters/store-trunk-registrations.js';
import { TrunkRegistrar } from '../../gateway/registration/trunk-registrar.js';
import { createSecretBox } from '../../control-api/platform/crypto/secret-box.js';
import { tenantCallSpeech } from '../../control-api/model/tenants/tenant-speech.js';
import { createTenantsRepository } from '../../control-api/model/tenants/tenants-repository.js';
import { ProviderTelephony, RoutingOriginator } from '../../control-api/features/providers/provider-telephony.js';
import { sealedNumbers } from '../../control-api/model/resources/definitions/lookups.js';
import { SipGateway } from '../../gateway/inbound/sip-gateway.js';
import { parseOutboundProxy, SipOriginator } from '../../gateway/outbound/sip-originator.js';
import { SipResolver } from '../../gateway/sip/resolve/sip-resolver.js';
import type { UdpTransport } from '../../gateway/sip/transport/udp.js';
import { GatewayCallTransfer } from '../../gateway/transfer/gateway-call-transfer.js';
import type { CallTransfer, CallTransferOutcome } from '../../core/ports/call-transfer.js';
import { loadOrCreateTlsCredentials, TlsSetupError, type TlsSetupFailure } from '../../gateway/sip/transport/certificate.js';
import { MediaService } from '../../media/media-service.js';
import { RtpengineSrtpRelay } from '../../media/webrtc/rtpengine-srtp.js';
import { offlineRecogniserLoad, startOfflineRecogniser, stopOfflineRecogniser } from '../../media/speech/recogniser/offline-recogniser.js';
import { preloadPronunciations } from '../../media/speech/pocketsphinx-stt.js';
import { StoreWebCallAuthority } from '../../control-api/features/gateway-adapters/web-call-authority.js';
import { callTokenKey } from '../../control-api/platform/crypto/call-token.js';
import { startWebCallMedia } from './web-call-media.js';
import { processOriginator } from '../originator-registry.js';
import type { RoleStarter } from './role.js';
import { queueCallAnalysis } from '../../control-api/features/insights/queue-call-analysis.js';

/** sip.abuse as the AbuseGuard takes it: scanner patterns compiled case-insensitively, the built-in list when unset. */
function gatewayAbuseOptions(a: SipAbuseSettings): NonNullable<Parameters<typeof SipGateway.start>[0]['abuse']> {
  return {
    perSourceRate: a.perSourceRate,
    perSourceBurst: a.perSourceBurst,
    refusalRate: a.refusalRate,
    retryAfterSeconds: a.retryAfterSeconds,
    maxConcurrentCalls: a.maxConcurrentCalls,
    authFailureLimit: a.authFailureLimit,
    authFailureWindowMs: a.authFailureWindowMs,
    blockMs: a.blockMs,
    ...(a.scannerUserAgents ? { scannerUserAgents: a.scannerUserAgents.map((p) => new RegExp(p, 'i')) } : {}),
  };
}

/**
 * sip.admission as the gateway takes it: calls and call rate per core when unset (30 calls and 2
 * new calls a second per core: setting a call up spawns speech engines, and each spawn stalls this
 * process's event loop for 10-230 ms as its memory grows, docs/sip-stack.md "Admission by
 * capacity"); 0 turns the lag signal off. The recogniser queue is the offline decoder pool's
 * (decodes waiting for a worker): past the limit, new calls would only make every turn slower.
 */
export function gatewayAdmissionOptions(a: SipAdmissionSettings, cores = availableParallelism()): NonNullable<Parameters<typeof SipGateway.start>[0]['admission']> {
  return {
    maxCalls: a.maxCalls ?? 30 * cores,
    maxCallsPerSecond: a.maxCallsPerSecond ?? 2 * cores,
    ...(a.maxEventLoopLagMs > 0 ? { maxEventLoopLagMs: a.maxEventLoopLagMs } : {}),
    maxRecogniserQueue: a.maxRecogniserQueue,
    recogniserQueueDepth: () => offlineRecogniserLoad().queued,
  };
}

/** What to do about each way a self-signed certificate can fail to appear. */
const tlsRemedies: Readonly<Record<TlsSetupFailure, string>> = {
  'data-dir-not-writable': 'give this user write access to the data directory (dataDir / DATA_DIR)',
  'openssl-missing': 'install openssl',
  'openssl-failed': 'see what openssl said',
};

/**
 * The SIP gateway role: UDP+TCP on sip.port, TLS on sip.tlsPort, WebSocket on sip.wsPort;
 * inbound calls are routed through the store (StoreCallDirectory) and run the number's recipe
 * through the voice pipeline (RecipeCallHandler) with the tenant's speech providers, recorded for
 * post-call insights.
 */
export const startGatewayRole: RoleStarter = async (ctx) => {
  const { config } = ctx;
  const logger = ctx.logger.child({ role: 'gateway' });
  const publicAddress = advertisedSipAddress(config.sip);
  // Without a configured certificate and unable to make one, the gateway still serves UDP/TCP/WS;
  // a configured certificate that cannot be read is a configuration error.
  let tls: Awaited<ReturnType<typeof loadOrCreateTlsCredentials>> | undefined;
  try {
    tls = await loadOrCreateTlsCredentials({
      ...(config.sip.tlsCertFile ? { certFile: config.sip.tlsCertFile } : {}),
      ...(config.sip.tlsKeyFile ? { keyFile: config.sip.tlsKeyFile } : {}),
      dataDir: config.dataDir,
      commonName: publicAddress,
    });
  } catch (error) {
    if (config.sip.tlsCertFile || config.sip.tlsKeyFile) throw error;
    // Say what failed (a data directory this user cannot write, openssl missing or failing): each
    // has its own remedy, and setting sip.tlsCertFile / sip.tlsKeyFile fixes all of them.
    const failure = error instanceof TlsSetupError ? error.failure : undefined;
    const remedy = failure ? `${tlsRemedies[failure]}, or set` : 'set';
    logger.warn(
      { failure, reason: (error as Error).message },
      `SIP over TLS disabled: ${(error as Error).message}; ${remedy} sip.tlsCertFile and sip.tlsKeyFile`,
    );
  }
  if (tls?.source === 'generated') logger.info({ certFile: tls.certFile }, 'self-signed SIP TLS certificate generated for local use');
  const media = new MediaService({
    bindAddress: config.media.bindAddress,
    advertisedAddress: publicAddress,
    ...(config.media.bindAddressIpv6 ? { bindAddress6: config.media.bindAddressIpv6 } : {}),
    ...(config.media.publicAddressIpv6 ? { advertisedAddress6: config.media.publicAddressIpv6 } : {}),
    portMin: config.media.portMin,
    portMax: config.media.portMax,
    jitterDepth: config.media.jitterDepth,
    timeouts: { rtpTimeoutMs: config.media.rtpTimeoutMs },
    logger: logger.child({ part: 'media' }),
  });
  // The offline recogniser's decoders load their model now, not on the first caller's first turn.
  // Without them (python3-pocketsphinx missing) calls still run: each offline turn fails with the
  // reason, and a cloud STT, where configured, carries the call.
  void startOfflineRecogniser({ logger: logger.child({ part: 'recogniser' }) }).catch((error: unknown) =>
    logger.error({ reason: (error as Error).message }, 'offline speech recognition unavailable: English calls without a cloud STT will not be understood'),
  );
  // And the words its grammars may use, read in this process: not during the first caller's turn.
  await preloadPronunciations();
  const directory = new StoreCallDirectory({ db: ctx.store.db });
  const recordings = recordingsFor(config, ctx.store.db);
  const secretBox = createSecretBox(ctx.secrets.secretKey);
  const code = new QuickJsCodeRunner({ workers: 1 });
  // The transfer needs the started stack; calls only arrive after start, so a late-bound slot is enough.
  const transferSlot: { impl?: CallTransfer } = {};
  const callHandler: RecipeCallHandler = new RecipeCallHandler({
    db: ctx.store.db,
    recorder: new CallRecorder({ db: ctx.store.db, onConversationEnded: queueCallAnalysis() }),
    services: platformServices({ db: ctx.store.db, box: secretBox, code, logger: logger.child({ part: 'recipes' }) }),
    logger: logger.child({ part: 'calls' }),
    recordingsDir: recordings.directory,
    ...(recordings.keep ? { keepRecording: recordings.keep } : {}),
    // Each call reads its tenant's settings.speech (keys opened per call, never logged).
    speech: tenantCallSpeech(ctx.store.db, createTenantsRepository(secretBox)),
    transfer: {
      // A call carried by a cloud provider is transferred by that provider; SIP calls by the gateway.
      transfer: (callId, target, signal): Promise<CallTransferOutcome> =>
        providers.owns(callId)
          ? providers.transfer(callId, target, signal)
          : (transferSlot.impl?.transfer(callId, target, signal) ?? Promise.resolve({ ok: false, reason: 'the gateway is not ready to transfer' })),
    },
  });
  // Numbers on cloud providers A, B, C: their webhooks and media streams reach this role's provider
  // listener, and their calls run through the same recipe runtime (docs/providers.md).
  const providers: ProviderTelephony = new ProviderTelephony({
    numbers: sealedNumbers(ctx.store.db),
    box: secretBox,
    logger: logger.child({ part: 'providers' }),
    clock: systemClock,
    scheduler: media.scheduler,
    handler: callHandler,
    ...(config.providers.publicBaseUrl ? { publicBaseUrl: config.providers.publicBaseUrl } : {}),
    advertisedHost: publicAddress,
    apiBaseUrls: {
      providerA: config.providers.providerA.apiBaseUrl,
      ...(config.providers.providerB.apiBaseUrl ? { providerB: config.providers.providerB.apiBaseUrl } : {}),
      providerC: config.providers.providerC.apiBaseUrl,
    },
    streamStartTimeoutMs: config.providers.streamStartTimeoutMs,
    reconnectGraceMs: config.providers.reconnectGraceMs,
    mediaTimeoutMs: config.media.rtpTimeoutMs,
    maxCallsPerNumber: config.sip.maxCallsPerNumber,
    maxCallsPerTenant: config.sip.maxCallsPerTenant,
  });
  // Web calls: browsers over SIP/WSS with WebRTC media, relayed to plain RTP by rtpengine.
  const webMedia = config.webCalls.enabled ? await startWebCallMedia(config, publicAddress, logger.child({ part: 'web-calls' })) : undefined;
  // The same rtpengine terminates SDES-SRTP for trunks with `srtp` set (docs/media.md, SRTP).
  const srtp = webMedia ? new RtpengineSrtpRelay(webMedia.bridge) : undefined;
  const web = webMedia ? { authority: new StoreWebCallAuthority({ db: ctx.store.db, key: callTokenKey(ctx.secrets.secretKey), clock: systemClock }), bridge: webMedia.bridge } : undefined;
  // RFC 4028 session timers for both directions (config keeps Min-SE at or above 90 s).
  const sessionTimer = { intervalSeconds: config.sip.sessionExpiresSeconds, minSeSeconds: config.sip.minSessionExpiresSeconds };
  const resolver = new SipResolver({ servers: config.sip.dnsServers });
  // Trunks that register with their carrier (RFC 3261 sec. 10.2); calls to their Contacts are theirs.
  const registrar = new TrunkRegistrar({
    registrations: new StoreTrunkRegistrations({ db: ctx.store.db, secretBox, secretKey: ctx.secrets.secretKey }),
    clock: systemClock,
    logger: logger.child({ part: 'registration' }),
    resolver,
    pollIntervalMs: config.sip.registration.pollIntervalMs,
    backoffBaseSeconds: config.sip.registration.backoffBaseSeconds,
    backoffMaxSeconds: config.sip.registration.backoffMaxSeconds,
  });
  const gateway = await SipGateway.start({
    transports: {
      host: config.sip.host,
      port: config.sip.port,
      tlsPort: config.sip.tlsPort,
      wsPort: config.sip.wsPort,
      wssPort: config.sip.wssPort,
      ...(tls ? { tls: { cert: tls.cert, key: tls.key } } : {}),
      http: config.http,
      receiveBufferBytes: config.sip.udpReceiveBufferBytes,
    },
    directory,
    media,
    callHandler,
    clock: systemClock,
    logger,
    publicAddress,
    trustedSources: config.sip.trustedSources,
    edgeAddresses: config.sip.edge.addresses,
    maxCallsPerNumber: config.sip.maxCallsPerNumber,
    maxCallsPerTenant: config.sip.maxCallsPerTenant,
    sessionTimer,
    maddrMulticast: config.sip.maddrMulticast,
    abuse: gatewayAbuseOptions(config.sip.abuse),
    admission: gatewayAdmissionOptions(config.sip.admission),
    receiveQueue: {
      perSource: config.sip.abuse.queuePerSource,
      turnBudget: config.sip.abuse.turnBudget,
      ...(config.sip.admission.maxReceiveWaitMs > 0 ? { maxWaitMs: config.sip.admission.maxReceiveWaitMs } : {}),
    },
    ...(web ? { web } : {}),
    registered: registrar,
    ...(srtp ? { srtp } : {}),
  }).catch(async (error: unknown) => {
    // A port in use: nothing of this role may keep the process alive while it reports and exits.
    await webMedia?.stop();
    await media.close();
    await code.close();
    await stopOfflineRecogniser();
    throw error;
  });
  const providerListener = await providers.listen(config.providers.host, config.providers.port, config.http).catch(async (error: unknown) => {
    await gateway.stop(0);
    await webMedia?.stop();
    await media.close();
    await code.close();
    await stopOfflineRecogniser();
    throw error;
  });
  logger.info({ port: providerListener.port, publicBaseUrl: providers.publicBaseUrl }, 'provider webhooks and media streams listening');
  const udp = gateway.transports.get('UDP') as UdpTransport | undefined;
  if (udp && udp.receiveBufferBytes < config.sip.udpReceiveBufferBytes) {
    // Linux caps SO_RCVBUF at net.core.rmem_max: a burst then overflows the kernel's buffer sooner.
    logger.warn({ asked: config.sip.udpReceiveBufferBytes, got: udp.receiveBufferBytes }, 'SIP UDP receive buffer smaller than sip.udpReceiveBufferBytes: raise net.core.rmem_max');
  }
  logger.info(
    { ports: gateway.ports, publicAddress },
    "SIP gateway listening: inbound calls run their number's recipe through the voice pipeline and are recorded for post-call insights",
  );
  // Outbound campaign calls leave through the same stack; the worker role dials through it (bin/originator-registry.ts).
  const originator = new SipOriginator({
    stack: gateway.stack,
    media,
    trunks: new StoreTrunkRoutes({ db: ctx.store.db, secretBox }),
    directory,
    registry: gateway.registry,
    clock: systemClock,
    logger: logger.child({ part: 'outbound' }),
    onAnswered: (call, request) => callHandler.handle(call, request),
    sessionTimer,
    // RFC 3263 NAPTR/SRV/A for trunk FQDNs, on the configured DNS servers (the system's when none).
    resolver,
    // Behind a SIP edge, every outbound call leaves through it (docs/edge.md).
    ...(config.sip.edge.outboundProxy ? { outboundProxy: parseOutboundProxy(config.sip.edge.outboundProxy) } : {}),
    ...(srtp ? { srtp } : {}),
  });
  // Campaign calls from provider numbers go through the provider's REST API, the others over SIP.
  const unbindOriginator = processOriginator.bind(new RoutingOriginator(originator, providers));
  transferSlot.impl = new GatewayCallTransfer({
    stack: gateway.stack,
    registry: gateway.registry,
    media,
    originator,
    clock: systemClock,
    logger: logger.child({ part: 'transfer' }),
    ...(config.sip.referNotifyWaitMs !== undefined ? { referTimeoutMs: config.sip.referNotifyWaitMs } : {}),
    // Bridge legs to a trunk that requires SRTP go through the same relay as its campaign calls.
    ...(srtp ? { srtp } : {}),
  });
  registrar.start(gateway.stack, `${publicAddress.includes(':') ? `[${publicAddress}]` : publicAddress}:${gateway.ports.UDP ?? config.sip.port}`);
  ctx.countLiveCalls(() => gateway.registry.inProgress + providers.calls.size);
  return {
    name: 'gateway',
    drain: async (timeoutMs) => {
      logger.info({ liveCalls: gateway.registry.inProgress, drainTimeoutMs: timeoutMs }, 'gateway draining: new INVITEs and OPTIONS get 503, live calls go on');
      // Calls on cloud providers drain beside the SIP calls; those still up at the timeout are hung
      // up at their provider by stop().
      // Carriers stop sending this node calls once its bindings are gone (Expires: 0, RFC 3261 sec. 10.2.2).
      const [result, providersIdle] = await Promise.all([
        gateway.drain(timeoutMs, config.shutdownGraceMs),
        providers.drain(timeoutMs),
        registrar.stop(config.sip.registration.unregisterTimeoutMs),
      ]);
      logger.info({ ms: result.ms, endedAtTimeout: result.endedAtTimeout, providerCallsLeft: providersIdle ? 0 : providers.calls.size }, 'gateway drained');
    },
    stop: async (graceMs) => {
      unbindOriginator();
      await registrar.stop(Math.min(graceMs, config.sip.registration.unregisterTimeoutMs));
      await providers.stop(graceMs);
      await providerListener.close(graceMs);
      await gateway.stop(graceMs);
      await webMedia?.stop();
      await media.close();
      await code.close();
      await stopOfflineRecogniser();
    },
  };
};
