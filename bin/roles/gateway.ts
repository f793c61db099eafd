import { networkInterfaces } from 'node:os';
import { systemClock } from '../../core/clock.js';
import { CallRecorder } from '../../control-api/calls/call-recorder.js';
import { InterimCallHandler } from '../../control-api/gateway-adapters/interim-call-handler.js';
import { StoreCallDirectory } from '../../control-api/gateway-adapters/store-call-directory.js';
import { StoreTrunkRoutes } from '../../control-api/gateway-adapters/store-trunk-routes.js';
import { createSecretBox } from '../../control-api/crypto/secret-box.js';
import { SipGateway } from '../../gateway/inbound/sip-gateway.js';
import { SipOriginator } from '../../gateway/outbound/sip-originator.js';
import { loadOrCreateTlsCredentials } from '../../gateway/sip/transport/certificate.js';
import { MediaService } from '../../media/media-service.js';
import { processOriginator } from '../originator-registry.js';
import type { RoleStarter } from './role.js';

/** RTP ports for call audio (no config key yet: media settings arrive with the media role). */

function firstExternalIpv4(): string | undefined {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return undefined;
}

/**
 * The SIP gateway role: UDP+TCP on sip.port, TLS on sip.tlsPort, WebSocket on sip.wsPort;
 * inbound calls are routed through the store (StoreCallDirectory) and, until the voice pipeline
 * exists, answered by the InterimCallHandler (echo + call record).
 */
export const startGatewayRole: RoleStarter = async (ctx) => {
  const { config } = ctx;
  const logger = ctx.logger.child({ role: 'gateway' });
  const publicAddress = config.sip.publicAddress ?? firstExternalIpv4() ?? '127.0.0.1';
  const tls = await loadOrCreateTlsCredentials({
    ...(config.sip.tlsCertFile ? { certFile: config.sip.tlsCertFile } : {}),
    ...(config.sip.tlsKeyFile ? { keyFile: config.sip.tlsKeyFile } : {}),
    dataDir: config.dataDir,
    commonName: publicAddress,
  });
  if (tls.source === 'generated') logger.info({ certFile: tls.certFile }, 'self-signed SIP TLS certificate generated for local use');
  const media = new MediaService({
    bindAddress: config.media.bindAddress,
    advertisedAddress: publicAddress,
    portMin: config.media.portMin,
    portMax: config.media.portMax,
    jitterDepth: config.media.jitterDepth,
    timeouts: { rtpTimeoutMs: config.media.rtpTimeoutMs },
    logger: logger.child({ part: 'media' }),
  });
  const directory = new StoreCallDirectory({ db: ctx.store.db });
  const callHandler = new InterimCallHandler(new CallRecorder({ db: ctx.store.db }), logger);
  const gateway = await SipGateway.start({
    transports: {
      host: config.sip.host,
      port: config.sip.port,
      tlsPort: config.sip.tlsPort,
      wsPort: config.sip.wsPort,
      tls: { cert: tls.cert, key: tls.key },
    },
    directory,
    media,
    callHandler,
    clock: systemClock,
    logger,
    publicAddress,
  });
  logger.info(
    { ports: gateway.ports, publicAddress },
    'SIP gateway listening: inbound calls are routed and answered with an echo of the caller audio and a call record; recipes do not run on calls yet',
  );
  // Outbound campaign calls leave through the same stack; the worker role dials through it (bin/originator-registry.ts).
  const unbindOriginator = processOriginator.bind(
    new SipOriginator({
      stack: gateway.stack,
      media,
      trunks: new StoreTrunkRoutes({ db: ctx.store.db, secretBox: createSecretBox(ctx.secrets.secretKey) }),
      directory,
      registry: gateway.registry,
      clock: systemClock,
      logger: logger.child({ part: 'outbound' }),
      onAnswered: (call) => callHandler.handle(call),
    }),
  );
  return {
    name: 'gateway',
    stop: async (graceMs) => {
      unbindOriginator();
      await gateway.stop(graceMs);
      await media.close();
    },
  };
};
