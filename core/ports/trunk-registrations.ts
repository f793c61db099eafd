/**
 * The trunks that register with their carrier (RFC 3261 sec. 10.2), and where the gateway writes
 * how each registration stands. The control plane opens the sealed password and hands it over
 * only through this port (control-api/features/gateway-adapters), so gateway/ never reads the store.
 */

import type { SrtpMode } from './srtp-relay.js';

export type RegistrationTransport = 'udp' | 'tcp' | 'tls';

export interface TrunkRegistration {
  readonly trunkId: string;
  readonly tenantId: string;
  /** The trunk's name and Extension Number, as inbound routing knows trunks (DirectoryTrunk). */
  readonly name: string;
  readonly extension: string | null;
  /** The trunk's SDES-SRTP mode (docs/media.md), for the calls to its Contact. */
  readonly srtp: SrtpMode;
  /** IP literal or FQDN (RFC 3263) of the registrar. */
  readonly registrar: string;
  /** Explicit port; absent: 5060/5061 and, for an FQDN, NAPTR/SRV. */
  readonly port: number | undefined;
  readonly transport: RegistrationTransport;
  /** The address-of-record's domain: the REGISTER's Request-URI (sec. 10.2). */
  readonly domain: string;
  /** The address-of-record's user. */
  readonly user: string;
  readonly expiresSeconds: number;
  /** Absent when the trunk has no outbound username/password: a challenge then fails the registration. */
  readonly credentials?: { readonly username: string; readonly password: string };
  /**
   * The user part of our Contact: a token derived from the platform key and the trunk id, stable
   * across restarts (the binding is replaced, not duplicated) and unguessable, so an INVITE to it
   * is known to come through the registrar.
   */
  readonly contactUser: string;
  /** Changes whenever the trunk's registration settings or credentials change: the client restarts. */
  readonly revision: string;
}

export type RegistrationStateName = 'unregistered' | 'registering' | 'registered' | 'refreshing' | 'backing-off' | 'failed' | 'unregistering' | 'stopped';

/** How one gateway node's registration of a trunk stands. */
export interface RegistrationReport {
  readonly trunkId: string;
  readonly tenantId: string;
  /** The node's Contact (one binding per gateway node). */
  readonly contact: string;
  readonly state: RegistrationStateName;
  readonly expiresAt: Date | undefined;
  readonly retryAt: Date | undefined;
  /** A status and reason or a local cause; never a credential. */
  readonly lastError: string | undefined;
}

export interface TrunkRegistrations {
  /** Every trunk that registers, in every tenant. */
  list(): Promise<readonly TrunkRegistration[]>;
  /** Records the state of one registration (upsert by trunk and contact). */
  report(report: RegistrationReport): Promise<void>;
}
