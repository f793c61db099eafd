import { networkInterfaces } from 'node:os';
import type { PlatformConfig } from './schema.js';

/**
 * The address the SIP gateway advertises (Via, Contact, SDP) and customers point their trunks
 * at: `sip.publicAddress` when set, else this host's first non-internal IPv4, else loopback.
 * The fallback is only right when every role runs on the gateway's host: a control process on
 * another machine would report its own address, so split deployments set `sip.publicAddress`.
 */
export function advertisedSipAddress(sip: Pick<PlatformConfig['sip'], 'publicAddress'>): string {
  if (sip.publicAddress) return sip.publicAddress;
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return '127.0.0.1';
}
