import { seqDelta } from './rtp-packet.js';

/**
 * Chooses which RTP source (SSRC) to play when the peer's stream changes source. Media servers
 * and SBCs switch SSRC for announcements and transfers, and some (rtpengine playing a file,
 * for one) send the new source while still forwarding the old. Rule:
 * - a source never played before takes over after `threshold` packets in sequence (an
 *   announcement starting);
 * - a source heard before takes over only once the current one has been silent for `silenceMs`
 *   (the announcement ended and the forwarded stream is back);
 * - anything else is dropped. Every switch restarts the jitter buffer (a new sequence space).
 */
export type SourceDecision = 'play' | 'switch' | 'drop';

export class SourceSelector {
  private current: number | undefined;
  private lastCurrentAt = 0;
  private candidate: number | undefined;
  private candidateSeq = 0;
  private candidateCount = 0;
  private readonly played = new Set<number>();
  switches = 0;
  dropped = 0;

  constructor(
    private readonly threshold = 3,
    private readonly silenceMs = 100,
  ) {}

  decide(ssrc: number, seq: number, now: number): SourceDecision {
    if (this.current === undefined || ssrc === this.current) {
      if (this.current === undefined) this.take(ssrc);
      this.lastCurrentAt = now;
      return 'play';
    }
    if (now - this.lastCurrentAt >= this.silenceMs) return this.switchTo(ssrc, now);
    if (!this.played.has(ssrc)) {
      if (ssrc === this.candidate && seqDelta(seq, this.candidateSeq) === 1) this.candidateCount++;
      else {
        this.candidate = ssrc;
        this.candidateCount = 1;
      }
      this.candidateSeq = seq;
      if (this.candidateCount >= this.threshold) return this.switchTo(ssrc, now);
    }
    this.dropped++;
    return 'drop';
  }

  private switchTo(ssrc: number, now: number): SourceDecision {
    this.take(ssrc);
    this.lastCurrentAt = now;
    this.switches++;
    return 'switch';
  }

  private take(ssrc: number): void {
    this.current = ssrc;
    this.candidate = undefined;
    this.candidateCount = 0;
    // Bounded memory for a peer that keeps inventing sources.
    if (this.played.size > 32) this.played.clear();
    this.played.add(ssrc);
  }
}
