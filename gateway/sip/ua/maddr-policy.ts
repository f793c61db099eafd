import { isIP } from 'node:net';

/**
 * One spelling per address, so text that names the same address compares equal: IPv6 in RFC 5952
 * form (lower case, zeros compressed; `FF02:0:0::1` and `ff02::1` alike) by the WHATWG URL
 * serializer, an IPv4-mapped IPv6 address (a dual-stack socket's source) as its IPv4 address.
 * Brackets are dropped; anything that is not an IP literal is returned unchanged.
 */
export function canonicalIp(address: string): string {
  const bare = address.charCodeAt(0) === 91 && address.endsWith(']') ? address.slice(1, -1) : address;
  if (isIP(bare) !== 6) return bare;
  let text: string;
  try {
    text = new URL(`http://[${bare}]/`).hostname.slice(1, -1);
  } catch {
    // A zone index (fe80::1%eth0) is not valid in a URL: compare it as lower-case text.
    return bare.toLowerCase();
  }
  // The serializer writes ::ffff:127.0.0.1 as ::ffff:7f00:1.
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(text);
  if (hex) {
    const [hi, lo] = [parseInt(hex[1] as string, 16), parseInt(hex[2] as string, 16)];
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return text;
}

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
 * Addresses are compared parsed (`canonicalIp`), not as text.
 */
export function maddrHonoured(maddr: string, source: string, allowedMulticast: readonly string[] = []): boolean {
  const address = canonicalIp(maddr);
  if (address === canonicalIp(source)) return true;
  return isMulticast(address) && allowedMulticast.some((group) => canonicalIp(group) === address);
}
