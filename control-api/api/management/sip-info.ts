import { isIP } from 'node:net';
import type Router from '@koa/router';
import { z } from 'zod';
import { advertisedSipAddress } from '../../../core/config/advertised-address.js';
import type { PlatformConfig } from '../../../core/config/schema.js';
import { authenticate } from '../route-kit/auth.js';
import type { ManagementDeps } from '../route-kit/management-deps.js';
import { clientIdParam, type OpenApiBuilder } from '../route-kit/openapi/builder.js';
import { sharedTags } from '../route-kit/openapi/operations.js';
import { tenantInScope } from '../route-kit/tenant-scope.js';

/**
 * What a customer bringing their own carrier configures on their side (spec: custom SIP trunk,
 * inbound data: "the service's SIP signaling IP"): where to send INVITEs, over which transports,
 * and which RTP range to open for the answer's media. Read from the configuration, not stored.
 */
export const sipInfoSchema = z.object({
  signalingAddress: z.string().describe('The SIP signalling address of the service (`sip.publicAddress`, or `sip.edge.publicAddress` behind a SIP edge): allow it and send INVITEs to it'),
  transports: z
    .array(
      z.object({
        transport: z.enum(['udp', 'tcp', 'tls', 'ws', 'wss']),
        port: z.number().int().min(1).max(65535),
        uri: z.string().describe('Where to send requests over this transport (a SIP URI; ws: the WebSocket URL, RFC 7118)'),
        certificate: z.enum(['configured', 'selfSigned']).optional().describe('tls and wss: the operator\'s certificate, or one the gateway generated'),
      }),
    )
    .describe('Listening transports; UDP and TCP share sip.port (RFC 3261 sec. 18)'),
  media: z
    .object({
      address: z.string().describe('Address in the SDP of the service (the same as signalingAddress)'),
      rtpPortMin: z.number().int(),
      rtpPortMax: z.number().int(),
    })
    .describe('RTP source/destination range of the service, for the customer\'s firewall'),
});
export type SipInfo = z.infer<typeof sipInfoSchema>;

/** RFC 3261 sec. 19.1.1 / RFC 3986: an IPv6 literal is bracketed in a URI host. */
const uriHost = (address: string): string => (isIP(address) === 6 ? `[${address}]` : address);

/**
 * The SIP info for a configuration. A port of 0 (ephemeral, tests only) is no address a
 * customer can configure, so that transport is left out rather than reported as port 0.
 */
export function sipInfoFromConfig(config: Pick<PlatformConfig, 'sip' | 'media'>): SipInfo {
  const edge = config.sip.edge;
  if (edge.addresses.length > 0 && edge.publicAddress) {
    // Behind the SIP edge (docs/edge.md) customers reach the edge, over UDP and TCP (the transports
    // edge-conf/kamailio.cfg listens on), and rtpengine's public side: never a node.
    const host = uriHost(edge.publicAddress);
    return {
      signalingAddress: edge.publicAddress,
      transports: (['udp', 'tcp'] as const).map((transport) => ({ transport, port: edge.publicPort, uri: `sip:${host}:${edge.publicPort};transport=${transport}` })),
      media: { address: edge.publicAddress, rtpPortMin: edge.mediaPortMin, rtpPortMax: edge.mediaPortMax },
    };
  }
  const address = advertisedSipAddress(config.sip);
  const host = uriHost(address);
  const { port, tlsPort, wsPort, wssPort } = config.sip;
  const transports: SipInfo['transports'] = [];
  if (port > 0) {
    transports.push({ transport: 'udp', port, uri: `sip:${host}:${port};transport=udp` });
    transports.push({ transport: 'tcp', port, uri: `sip:${host}:${port};transport=tcp` });
  }
  // The gateway serves TLS with the configured certificate or, without one, a self-signed one it generates.
  if (tlsPort > 0) transports.push({ transport: 'tls', port: tlsPort, uri: `sips:${host}:${tlsPort}`, certificate: config.sip.tlsCertFile ? 'configured' : 'selfSigned' });
  if (wsPort > 0) transports.push({ transport: 'ws', port: wsPort, uri: `ws://${host}:${wsPort}` });
  // Secure WebSocket (browsers' web calls) uses the same certificate as TLS.
  if (wssPort > 0) transports.push({ transport: 'wss', port: wssPort, uri: `wss://${host}:${wssPort}`, certificate: config.sip.tlsCertFile ? 'configured' : 'selfSigned' });
  return { signalingAddress: address, transports, media: { address, rtpPortMin: config.media.portMin, rtpPortMax: config.media.portMax } };
}

const path = '/tenants/:clientId/sip-info';

/** `GET /v1/tenants/{clientId}/sip-info`: read-only, for the tenant's own tokens and the operator. */
export function mountSipInfoRoute(router: Router, deps: ManagementDeps, info: SipInfo): void {
  router.get(path, async (ctx) => {
    const principal = await authenticate(ctx, deps.db, deps.operatorToken);
    await tenantInScope(deps.db, principal, (ctx.params as { clientId: string }).clientId, ctx);
    ctx.body = info;
  });
}

/** The route's part of `/v1/openapi.json`. */
export function sipInfoOpenApi(b: OpenApiBuilder): void {
  b.read('/v1/tenants/{clientId}/sip-info', {
    operationId: 'getSipInfo',
    summary: 'The service\'s SIP signalling address, transports and RTP ports, to configure a custom SIP trunk on the customer\'s side',
    tag: sharedTags.sipTrunk,
    parameters: [clientIdParam],
    response: ['SipInfo', sipInfoSchema, 'Where the customer\'s gateway sends calls'],
  });
}
