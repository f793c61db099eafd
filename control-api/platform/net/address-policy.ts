import { BlockList, isIP } from 'node:net';

/**
 * Which network addresses an outbound request from a recipe may reach. Loopback, private,
 * carrier-grade NAT, link-local (cloud metadata at 169.254.169.254 included), multicast and
 * reserved ranges are refused unless the tenant's allowlist names the host, the address or a
 * CIDR containing it (RFC 1918, RFC 6598, RFC 3927, RFC 4193, RFC 4291 sec. 2.5).
 */
const blocked = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['2001:db8::', 32],
] as const) {
  blocked.addSubnet(network, prefix, 'ipv6');
}

/** IPv4 embedded in an IPv4-mapped (::ffff:a.b.c.d) or NAT64 (64:ff9b::a.b.c.d) IPv6 address. */
function embeddedIpv4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const dotted = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1];
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (!hex) return undefined;
  const high = parseInt(hex[1] ?? '0', 16);
  const low = parseInt(hex[2] ?? '0', 16);
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}

export function isBlockedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family === 6) {
    const v4 = embeddedIpv4(address);
    return v4 ? blocked.check(v4, 'ipv4') : blocked.check(address, 'ipv6');
  }
  return true;
}

/** Allowlist entries: a hostname (`crm.internal`), an address (`10.1.2.3`) or a CIDR (`10.1.0.0/16`). */
export function isAllowlisted(allowlist: readonly string[], hostname: string, address: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, '');
  for (const raw of allowlist) {
    const entry = raw.trim().toLowerCase();
    if (!entry) continue;
    if (entry === host || entry === address.toLowerCase()) return true;
    const [network, bits] = entry.split('/');
    if (network && bits !== undefined && isIP(network) && isIP(address) === isIP(network)) {
      const list = new BlockList();
      const type = isIP(network) === 4 ? 'ipv4' : 'ipv6';
      list.addSubnet(network, Number(bits), type);
      if (list.check(address, type)) return true;
    }
  }
  return false;
}

/** Why an address is refused, or undefined when it may be contacted. */
export function refusal(allowlist: readonly string[], hostname: string, address: string): string | undefined {
  if (!isBlockedAddress(address) || isAllowlisted(allowlist, hostname, address)) return undefined;
  return `outbound request to ${hostname} refused: ${address} is a loopback, private, link-local or reserved address not in the tenant's allowlist`;
}

/**
 * What can be decided about a URL's host before any DNS lookup: an IP literal is checked as
 * it is, and `localhost` / `*.localhost` always mean loopback (RFC 6761 sec. 6.3). Any other
 * name needs the lookup at connection time (SafeHttp checks every address it resolves to).
 * Returns why the host is refused, or undefined.
 */
export function refusalBeforeLookup(allowlist: readonly string[], hostname: string): string | undefined {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
  if (isIP(host)) return refusal(allowlist, host, host);
  if (host === 'localhost' || host.endsWith('.localhost')) {
    if (isAllowlisted(allowlist, host, '127.0.0.1') || isAllowlisted(allowlist, host, '::1')) return undefined;
    return `${host} is a loopback name (RFC 6761) not in the tenant's allowlist`;
  }
  return undefined;
}
