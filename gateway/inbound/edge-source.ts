import { isIP } from 'node:net';

/**
 * The header in which the SIP edge (edge-conf/kamailio.cfg) passes on the address a request
 * reached it from. Behind the edge every packet's source is the edge, so trunk identification
 * (by termination address), per-source rate limits and blocking all go by this value instead.
 */
export const EDGE_SOURCE_HEADER = 'X-VAP-Source';
const headerKey = EDGE_SOURCE_HEADER.toLowerCase();

/** The address a new request is judged by, or why it is refused. */
export type RequestSource =
  | { readonly kind: 'source'; readonly address: string; readonly viaEdge: boolean }
  | { readonly kind: 'refused'; readonly status: 400 | 403; readonly reason: string };

/** `::ffff:a.b.c.d` is `a.b.c.d` (a dual-stack socket reports IPv4 peers that way). */
const plain = (address: string): string => (address.toLowerCase().startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address.toLowerCase());

/**
 * Which sources are the edge, and what they say about where a request came from. Without edge
 * addresses the gateway faces carriers directly: the packet's source is the request's source and
 * the header means nothing to us, so it is refused from anyone (a carrier must not pick its own
 * identity).
 */
export class EdgeSources {
  private readonly edges: ReadonlySet<string>;

  constructor(addresses: readonly string[]) {
    this.edges = new Set(addresses.map(plain));
  }

  /** True when the gateway sits behind an edge: new calls come only through it. */
  get enabled(): boolean {
    return this.edges.size > 0;
  }

  isEdge(address: string): boolean {
    return this.edges.has(plain(address));
  }

  /**
   * The source of a new request that arrived from `packetSource` carrying `header` values of
   * X-VAP-Source. From the edge: the one value it added (the edge removes any copy the carrier
   * sent), which must be an IP address. From anyone else: the packet's source, and the header is
   * a forgery (403).
   */
  sourceOf(packetSource: string, header: readonly string[]): RequestSource {
    if (!this.isEdge(packetSource)) {
      if (header.length > 0) return { kind: 'refused', status: 403, reason: `Forbidden (${EDGE_SOURCE_HEADER} is only taken from the SIP edge)` };
      return { kind: 'source', address: plain(packetSource), viaEdge: false };
    }
    if (header.length === 0) return { kind: 'refused', status: 403, reason: `Forbidden (the edge sent no ${EDGE_SOURCE_HEADER})` };
    const value = header.length === 1 ? (header[0] ?? '').trim() : '';
    // RFC 3261 sec. 21.4.1 leaves the phrase to us: name the header, as for other malformed ones.
    if (isIP(value) === 0) return { kind: 'refused', status: 400, reason: `Bad ${EDGE_SOURCE_HEADER} Header` };
    return { kind: 'source', address: plain(value), viaEdge: true };
  }

  /**
   * The key per-source admission (rate buckets, blocks) counts a request under, before it is
   * parsed: the carrier's address for requests the edge relays, so one noisy carrier cannot use
   * up the edge's share; the edge's own address for its probes or a malformed header.
   */
  admissionKey(packetSource: string, header: (key: string) => string | undefined): string {
    if (!this.isEdge(packetSource)) return packetSource;
    const value = header(headerKey)?.trim();
    return value !== undefined && isIP(value) !== 0 ? plain(value) : packetSource;
  }
}
