import { isIP } from 'node:net';

/** 224.0.0.0/4 and ff00::/8 (RFC 5771, RFC 4291 sec. 2.7). */
export function isMulticast(address: string): boolean {
  const kind = isIP(address);
  if (kind === 4) {
    const first = Number(address.split('.')[0]);
    return first >= 224 && first <= 239;
  }
  return kind === 6 && address.toLowerCase().startsWith('ff');
}

/**
 * Whether a Via `maddr` may steer our response over UDP (RFC 3261 sec. 18.2.2). The RFC sends to
 * maddr whatever it names; taken as is, any request could aim our responses at a third host (a
 * reflection and amplification vector). We honour it only when it is the address the request
 * came from, or a multicast group the operator listed (`sip.maddrMulticast`); otherwise the
 * response goes where it would without maddr (received/rport, sec. 18.2.2 and RFC 3581 sec. 4).
 */
export function maddrHonoured(maddr: string, source: string, allowedMulticast: readonly string[] = []): boolean {
  const bare = maddr.charCodeAt(0) === 91 ? maddr.slice(1, -1) : maddr;
  if (bare === source) return true;
  return isMulticast(bare) && allowedMulticast.includes(bare);
}
