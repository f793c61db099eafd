/**
 * What inbound routing needs to know about tenants, numbers and trunks. The gateway asks; the
 * control plane answers from its store (control-api/features/gateway-adapters), so gateway/ never
 * imports control-api/.
 */

import type { SrtpMode } from './srtp-relay.js';

export interface DirectoryTrunk {
  readonly id: string;
  readonly tenantId: string;
  readonly name: string;
  /** Fallback tenant identifier (spec: custom SIP trunk, inbound). */
  readonly extension: string | null;
  /** SDES-SRTP on the trunk's calls; absent: off. */
  readonly srtp?: SrtpMode;
}

export interface DirectoryNumber {
  readonly id: string;
  readonly tenantId: string;
  /** E.164, `+` and digits. */
  readonly e164: string;
  readonly enabled: boolean;
  readonly recipeId: string;
  /** Custom SIP trunk the number is reached through; null for provider and native-stack numbers. */
  readonly sipTrunkId: string | null;
  readonly language: string;
  /** Spec: Max call duration with AI, 5 to 30 minutes. */
  readonly maxCallDurationMinutes: number;
  /** Spec: End Call on Silence, 1 to 5 minutes. */
  readonly endCallOnSilenceMinutes: number;
}

export interface CallDirectory {
  /** Trunks whose termination addresses (IPs, or FQDNs resolving to it) include `address`. */
  trunksForSource(address: string): Promise<readonly DirectoryTrunk[]>;
  /** The number with this E.164 (any formatting accepted), in any tenant. */
  numberByE164(number: string): Promise<DirectoryNumber | undefined>;
  /** The trunk whose Extension Number is `extension`. */
  trunkByExtension(extension: string): Promise<DirectoryTrunk | undefined>;
  /** The number a call identified only by its trunk's extension lands on (the trunk's own number). */
  numberForTrunk(trunk: DirectoryTrunk): Promise<DirectoryNumber | undefined>;
}
