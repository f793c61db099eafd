import { readFileSync } from 'node:fs';
import { isIPv6 } from 'node:net';

/**
 * Datagrams the kernel dropped for a bound UDP socket because its receive buffer was full, from
 * the `drops` column of /proc/net/udp (udp6 for IPv6): the flood loss no user-space counter can
 * see. Undefined off Linux or when no socket is bound there.
 */
export function udpReceiveDrops(address: string, port: number): number | undefined {
  const v6 = isIPv6(address);
  let table: string;
  try {
    table = readFileSync(v6 ? '/proc/net/udp6' : '/proc/net/udp', 'latin1');
  } catch {
    return undefined;
  }
  const local = `${procAddress(address, v6)}:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  let drops: number | undefined;
  for (const line of table.split('\n')) {
    const fields = line.trim().split(/\s+/);
    if (fields[1] !== local) continue;
    drops = (drops ?? 0) + Number(fields[fields.length - 1]);
  }
  return drops;
}

/** The kernel prints each 32-bit word of the address in host byte order (little-endian here). */
function procAddress(address: string, v6: boolean): string {
  if (!v6) {
    const octets = address.split('.').map(Number);
    return octets.reverse().map((o) => o.toString(16).toUpperCase().padStart(2, '0')).join('');
  }
  const words = expandV6(address);
  let out = '';
  for (let w = 0; w < 4; w++) {
    const hi = words[w * 2] as number;
    const lo = words[w * 2 + 1] as number;
    const bytes = [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff].reverse();
    out += bytes.map((b) => b.toString(16).toUpperCase().padStart(2, '0')).join('');
  }
  return out;
}

function expandV6(address: string): number[] {
  const [head = '', tail] = address.split('::');
  const parse = (s: string): number[] => (s ? s.split(':').map((h) => parseInt(h, 16)) : []);
  const a = parse(head);
  const b = tail === undefined ? [] : parse(tail);
  return [...a, ...new Array<number>(8 - a.length - b.length).fill(0), ...b];
}
