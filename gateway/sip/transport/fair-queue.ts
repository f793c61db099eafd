/**
 * Admitted messages wait here per source and are handed on in rounds: each round takes at most
 * `turnBudget` messages from every source that has some, in arrival order per source, then yields
 * to the event loop (setImmediate) so sockets are read again before the next round. One busy
 * source therefore delays another's message by at most one round of its budget, not by its
 * whole backlog; a source whose queue is full loses what it sends next (datagrams only: the
 * sender retransmits, RFC 3261 sec. 17.1.2.2).
 */
export class FairQueue<T> {
  private readonly queues = new Map<string, { items: T[]; head: number }>();
  private scheduled = false;
  private stopped = false;

  constructor(
    private readonly deliver: (item: T) => void,
    private readonly limits: { readonly perSource: number; readonly turnBudget: number },
  ) {}

  /** False when `source` already has `perSource` messages waiting: the item is not taken. */
  push(source: string, item: T): boolean {
    if (this.stopped) return false;
    let q = this.queues.get(source);
    if (q === undefined) {
      q = { items: [], head: 0 };
      this.queues.set(source, q);
    } else if (q.items.length - q.head >= this.limits.perSource) {
      return false;
    }
    q.items.push(item);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.round);
    }
    return true;
  }

  /** Messages waiting, over all sources. */
  get waiting(): number {
    let n = 0;
    for (const q of this.queues.values()) n += q.items.length - q.head;
    return n;
  }

  /** Drops what waits and takes nothing more (the transport is closing). */
  stop(): void {
    this.stopped = true;
    this.queues.clear();
  }

  private readonly round = (): void => {
    this.scheduled = false;
    // Sources that arrive during this round (a delivery can send and so receive) wait for the next.
    for (const [source, q] of [...this.queues]) {
      const end = Math.min(q.items.length, q.head + this.limits.turnBudget);
      while (q.head < end) {
        const item = q.items[q.head] as T;
        q.items[q.head++] = undefined as T;
        this.deliver(item);
      }
      if (q.head >= q.items.length) this.queues.delete(source);
      else if (q.head > 1024) {
        q.items = q.items.slice(q.head);
        q.head = 0;
      }
    }
    if (this.queues.size > 0 && !this.scheduled && !this.stopped) {
      this.scheduled = true;
      setImmediate(this.round);
    }
  };
}
