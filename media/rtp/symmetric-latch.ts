import { seqDelta } from './rtp-packet.js';

/**
 * Symmetric RTP (RFC 4961) with latching, the usual NAT practice.
 *
 * Rule: we send to the address in the peer's SDP until the peer's own packets tell us where it
 * really is. The source address:port of `threshold` valid packets in sequence (consecutive
 * sequence numbers, a negotiated payload type) becomes the destination ("latched"). From then on,
 * packets from any other source are dropped, which stops RTP injection ("RTP bleed"), until the
 * latched source has been silent for `relatchAfterMs` (a NAT rebinding) or the remote SDP changes.
 */
export interface LatchOptions {
  readonly threshold?: number;
  readonly relatchAfterMs?: number;
}

export class SymmetricRtpLatch {
  address: string;
  port: number;
  latched = false;
  /** Packets dropped because they came from somewhere other than the latched source. */
  foreignPackets = 0;
  private candidate = '';
  private candidateSeq = 0;
  private candidateCount = 0;
  private lastFromLatchedAt = 0;
  private readonly threshold: number;
  private readonly relatchAfterMs: number;

  constructor(sdpAddress: string, sdpPort: number, options: LatchOptions = {}) {
    this.address = sdpAddress;
    this.port = sdpPort;
    this.threshold = Math.max(1, options.threshold ?? 2);
    this.relatchAfterMs = options.relatchAfterMs ?? 2000;
  }

  /** Remote SDP changed (re-INVITE): start over from the new address. */
  reset(sdpAddress: string, sdpPort: number): void {
    this.address = sdpAddress;
    this.port = sdpPort;
    this.latched = false;
    this.candidate = '';
    this.candidateCount = 0;
  }

  /** Whether to accept a valid packet from this source. */
  accept(address: string, port: number, seq: number, now: number): boolean {
    if (this.latched) {
      if (address === this.address && port === this.port) {
        this.lastFromLatchedAt = now;
        return true;
      }
      if (now - this.lastFromLatchedAt < this.relatchAfterMs) {
        this.foreignPackets++;
        return false;
      }
      this.latched = false;
      this.candidate = '';
    }
    const key = `${address}:${port}`;
    if (key === this.candidate && seqDelta(seq, this.candidateSeq) === 1) this.candidateCount++;
    else if (key !== this.candidate) {
      this.candidate = key;
      this.candidateCount = 1;
    }
    this.candidateSeq = seq;
    if (this.candidateCount >= this.threshold) {
      this.latched = true;
      this.address = address;
      this.port = port;
      this.lastFromLatchedAt = now;
    }
    return true;
  }
}
