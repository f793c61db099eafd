import type { PlatformConfig } from '../../core/config/schema.js';
import type { Logger } from '../../core/logger.js';
import { RtpengineBridge } from '../../media/webrtc/rtpengine-bridge.js';
import { RtpengineProcess } from '../../media/webrtc/rtpengine-process.js';

/** The web call media relay the gateway role uses: an rtpengine it starts, or one configured by address. */
export interface WebCallMedia {
  readonly bridge: RtpengineBridge;
  stop(): Promise<void>;
}

/**
 * rtpengine for web calls (docs/sip-stack.md, Web calls): `webCalls.rtpengine.ng` names a running
 * one; otherwise the gateway starts its own (`webCalls.rtpengine.binary`, Debian rtpengine-daemon).
 * When neither works the gateway runs without web calls (their INVITEs get 403) and says why once.
 */
export async function startWebCallMedia(config: PlatformConfig, publicAddress: string, logger: Logger): Promise<WebCallMedia | undefined> {
  const r = config.webCalls.rtpengine;
  try {
    if (r.ng) {
      const [host, port] = [r.ng.slice(0, r.ng.lastIndexOf(':')), Number(r.ng.slice(r.ng.lastIndexOf(':') + 1))];
      const bridge = new RtpengineBridge({ ng: { host, port }, logger });
      if (!(await bridge.ping())) logger.warn({ ng: r.ng }, 'rtpengine does not answer on webCalls.rtpengine.ng yet: web calls fail until it does');
      logger.info({ ng: r.ng }, 'web calls: media through the configured rtpengine');
      return { bridge, stop: async () => bridge.close() };
    }
    const started = await RtpengineProcess.start({ binary: r.binary, interface: r.interface ?? publicAddress, portMin: r.portMin, portMax: r.portMax, logger });
    logger.info({ ng: started.process.ng, interface: r.interface ?? publicAddress, ports: `${r.portMin}-${r.portMax}` }, 'web calls: rtpengine started for WebRTC media');
    return {
      bridge: started.bridge,
      stop: async () => {
        started.bridge.close();
        await started.process.stop();
      },
    };
  } catch (error) {
    logger.warn({ reason: (error as Error).message }, `web calls disabled: ${(error as Error).message} (install Debian's rtpengine-daemon, or set webCalls.rtpengine.ng; webCalls.enabled=false silences this)`);
    return undefined;
  }
}
