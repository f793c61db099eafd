/**
 * Where an outbound call on a custom SIP trunk goes and which digest credentials answer the
 * trunk's challenges (RFC 3261 sec. 22.2). The control plane opens the sealed password and hands
 * it over only through this port (control-api/features/gateway-adapters), so gateway/ never reads the store.
 */

import type { SrtpMode } from './srtp-relay.js';

export type OutboundTransport = 'udp' | 'tcp' | 'tls';

export interface OutboundTrunkRoute {
  readonly trunkId: string;
  readonly tenantId: string;
  /** IP literal or FQDN: the trunk's outbound address, else its first termination address. */
  readonly host: string;
  readonly port: number;
  readonly transport: OutboundTransport;
  /** Absent when the trunk has no outbound username/password: challenges then fail the call. */
  readonly credentials?: { readonly username: string; readonly password: string };
  /** SDES-SRTP: `required` makes our offer RTP/SAVP (through the SRTP relay); absent: off. */
  readonly srtp?: SrtpMode;
}

export interface TrunkRoutes {
  /** The route of a trunk by id, or undefined when it no longer exists. */
  outboundRoute(trunkId: string): Promise<OutboundTrunkRoute | undefined>;
}
