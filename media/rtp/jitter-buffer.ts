import { seqDelta } from './rtp-packet.js';

/**
 * Jitter buffer keyed by RTP sequence number, with two ways out.
 *
 * Packets are kept in a ring indexed by an extended (wrap-aware, RFC 3550 A.1) sequence number.
 * A packet that arrives after its slot was played (or concealed) is `late` and dropped.
 *
 * - `popReady(now, waitMs)` (what the media session uses): a packet plays as soon as every packet
 *   before it has played, so in-order audio reaches the listener (VAD, endpointing, STT) the
 *   moment it arrives; only a hole is waited for, `waitMs` (the adaptive target, see
 *   adaptive-delay.ts) from when a later packet revealed it, then reported `missing`.
 * - `pop()`: classic fixed depth, one slot per 20 ms tick once `depth` packets are buffered;
 *   running dry re-primes. For consumers that need a steady playout clock.
 *
 * Payloads are kept by reference.
 */
export interface JitterBufferOptions {
  /** Packets buffered before playout starts (each 20 ms). */
  readonly depth?: number;
  /** Ring capacity; a packet further ahead than this resynchronises the buffer. */
  readonly capacity?: number;
  /**
   * Most packets allowed to wait. A sender whose clock runs faster than ours slowly fills the
   * buffer; past this the oldest are dropped down to `depth` again, bounding the added latency.
   */
  readonly maxQueued?: number;
}

/**
 * `late`: its slot has already played; `concealed`: its slot was played as a hole (the wait for
 * it was too short: an adaptive wait grows on this, not on a duplicate of a played packet).
 * Both are dropped and counted in `stats.late`.
 */
export type PushResult = 'accepted' | 'duplicate' | 'late' | 'concealed' | 'resync';

export type PopResult =
  | { readonly kind: 'packet'; readonly seq: number; readonly timestamp: number; readonly payload: Buffer | null }
  | { readonly kind: 'missing'; readonly seq: number };

export interface JitterStats {
  accepted: number;
  duplicates: number;
  late: number;
  missing: number;
  resyncs: number;
  underruns: number;
  /** Packets discarded to bring the latency back down to the target depth. */
  trimmed: number;
}

export class JitterBuffer {
  readonly depth: number;
  private readonly capacity: number;
  private readonly maxQueued: number;
  private readonly slotExt: Float64Array;
  private readonly slotTs: Float64Array;
  private readonly slotPayload: (Buffer | null)[];
  private started = false;
  private primed = false;
  private playedAny = false;
  private lastSeq = 0;
  private lastExt = 0;
  private highestExt = -1;
  private nextExt = 0;
  private baseExt = 0;
  private baseSeq = 0;
  private startedAt = -Infinity;
  /** When the hole at `nextExt` was first seen (eager playout), NaN when there is none. */
  private holeSince = NaN;
  readonly stats: JitterStats = { accepted: 0, duplicates: 0, late: 0, missing: 0, resyncs: 0, underruns: 0, trimmed: 0 };

  constructor(options: JitterBufferOptions = {}) {
    this.depth = Math.max(1, options.depth ?? 3);
    this.capacity = Math.max(this.depth * 2, options.capacity ?? 64);
    this.maxQueued = Math.min(this.capacity - 1, Math.max(this.depth + 1, options.maxQueued ?? this.depth + 10));
    this.slotExt = new Float64Array(this.capacity).fill(-1);
    this.slotTs = new Float64Array(this.capacity);
    this.slotPayload = new Array<Buffer | null>(this.capacity).fill(null);
  }

  /**
   * `payload` null marks a slot that carries no audio (e.g. an RFC 4733 event packet);
   * `arrivalMs` (monotonic) lets eager playout hold a new stream's first packets briefly.
   */
  push(seq: number, timestamp: number, payload: Buffer | null, arrivalMs?: number): PushResult {
    if (!this.started) {
      this.reset(seq, arrivalMs);
    }
    const ext = this.lastExt + seqDelta(seq, this.lastSeq);
    const behind = this.nextExt - ext;
    const ahead = ext - this.nextExt;
    if (behind > this.capacity || ahead >= this.capacity) {
      // Far outside the window: the peer restarted its sequence (new source, re-INVITE).
      this.stats.resyncs++;
      this.reset(seq, arrivalMs);
      this.store(this.lastExt, timestamp, payload);
      return 'resync';
    }
    if (behind > 0) {
      // Before playout starts, a reordered earlier packet may still move the start back.
      if (this.primed || this.playedAny || behind >= this.depth) {
        this.stats.late++;
        return this.slotExt[this.slotIndex(ext)] === -ext ? 'concealed' : 'late';
      }
      this.nextExt = ext;
    }
    const slot = this.slotIndex(ext);
    if (this.slotExt[slot] === ext) {
      this.stats.duplicates++;
      return 'duplicate';
    }
    if (ext > this.lastExt) {
      this.lastExt = ext;
      this.lastSeq = seq & 0xffff;
    }
    this.store(ext, timestamp, payload);
    return 'accepted';
  }

  /** Forgets everything buffered: the next packet starts a new stream (the source changed). */
  restart(): void {
    this.started = false;
    this.primed = false;
    this.holeSince = NaN;
    this.slotExt.fill(-1);
    this.slotPayload.fill(null);
  }

  /**
   * Eager playout step: the next packet if it is here; `missing` once the hole at the head has
   * waited `waitMs` (at once when more than `maxQueued` packets wait behind it); undefined while
   * waiting or empty. A new stream's first packet is held until `depth` packets are in or it has
   * waited `waitMs`, so packets reordered at the very start are not declared lost.
   */
  popReady(now: number, waitMs: number): PopResult | undefined {
    if (!this.started || this.highestExt < this.nextExt) return undefined;
    if (!this.playedAny && this.highestExt - this.nextExt + 1 < this.depth && now - this.startedAt < waitMs) return undefined;
    const ext = this.nextExt;
    if (this.slotExt[this.slotIndex(ext)] !== ext) {
      // One wait per gap: the slots after a concealed one were due even earlier.
      if (Number.isNaN(this.holeSince)) this.holeSince = now;
      if (now - this.holeSince < waitMs && this.highestExt - ext + 1 <= this.maxQueued) return undefined;
    } else {
      this.holeSince = NaN;
    }
    this.primed = true;
    return this.take();
  }

  /** One playout step; `undefined` while priming or after running dry. */
  pop(): PopResult | undefined {
    if (!this.started) return undefined;
    if (!this.primed) {
      if (this.highestExt - this.nextExt + 1 < this.depth) return undefined;
      this.primed = true;
    }
    if (this.highestExt < this.nextExt) {
      this.primed = false;
      this.stats.underruns++;
      return undefined;
    }
    if (this.highestExt - this.nextExt + 1 > this.maxQueued) {
      const target = this.highestExt - this.depth + 1;
      for (let e = this.nextExt; e < target; e++) {
        const slot = this.slotIndex(e);
        if (this.slotExt[slot] === e) {
          this.slotExt[slot] = -1;
          this.slotPayload[slot] = null;
          this.stats.trimmed++;
        }
      }
      this.nextExt = target;
    }
    return this.take();
  }

  /** Plays the head slot: its packet, or `missing` for a hole. */
  private take(): PopResult {
    const ext = this.nextExt++;
    this.playedAny = true;
    const slot = this.slotIndex(ext);
    if (this.slotExt[slot] !== ext) {
      this.stats.missing++;
      // Remember the concealment (negative ext) so the packet, should it still come, is told apart.
      this.slotExt[slot] = -ext;
      return { kind: 'missing', seq: this.seqOf(ext) };
    }
    this.slotExt[slot] = -1;
    const payload = this.slotPayload[slot] ?? null;
    this.slotPayload[slot] = null;
    return { kind: 'packet', seq: this.seqOf(ext), timestamp: this.slotTs[slot] ?? 0, payload };
  }

  /** Sequence slots from the head to the newest packet (holes included): 0 when it ran dry. */
  get waiting(): number {
    return this.started ? Math.max(0, this.highestExt - this.nextExt + 1) : 0;
  }

  /** Packets currently waiting for playout. */
  get buffered(): number {
    let n = 0;
    for (let ext = this.nextExt; ext <= this.highestExt; ext++) if (this.slotExt[this.slotIndex(ext)] === ext) n++;
    return n;
  }

  private store(ext: number, timestamp: number, payload: Buffer | null): void {
    const slot = this.slotIndex(ext);
    this.slotExt[slot] = ext;
    this.slotTs[slot] = timestamp;
    this.slotPayload[slot] = payload;
    if (ext > this.highestExt) this.highestExt = ext;
    this.stats.accepted++;
  }

  private reset(seq: number, arrivalMs: number | undefined): void {
    this.started = true;
    this.primed = false;
    this.playedAny = false;
    this.startedAt = arrivalMs ?? -Infinity;
    this.holeSince = NaN;
    this.slotExt.fill(-1);
    this.slotPayload.fill(null);
    // Extended numbers start high so `ext - capacity` never goes negative.
    this.lastSeq = seq & 0xffff;
    this.lastExt = 1 << 20;
    this.nextExt = this.lastExt;
    this.baseExt = this.lastExt;
    this.baseSeq = this.lastSeq;
    this.highestExt = this.lastExt - 1;
  }

  private seqOf(ext: number): number {
    return (ext - this.baseExt + this.baseSeq) & 0xffff;
  }

  private slotIndex(ext: number): number {
    return ext % this.capacity;
  }
}
