/**
 * Messages waiting per source, handed on in rounds: each round takes at most `turnBudget`
 * messages from every source that has some, in arrival order per source. One busy source
 * therefore delays another's message by at most one round of its budget, not by its whole
 * backlog; a source whose queue is full loses what it sends next (datagrams only: the sender
 * retransmits, RFC 3261 sec. 17.1.2.2). Passive: the owner (receive-gate.ts DatagramIntake)
 * decides when a round runs, so the socket is read between rounds.
 */
export class FairQueue<T> {
  private readonly queues = new Map<string, { items: T[]; head: number }>();
  private count = 0;

  constructor(private readonly limits: { readonly perSource: number; readonly turnBudget: number }) {}

  /** False when `source` already has `perSource` messages waiting: the item is not taken. */
  push(source: string, item: T): boolean {
    let q = this.queues.get(source);
    if (q === undefined) {
      q = { items: [], head: 0 };
      this.queues.set(source, q);
    } else if (q.items.length - q.head >= this.limits.perSource) {
      return false;
    }
    q.items.push(item);
    this.count++;
    return true;
  }

  /** Messages waiting, over all sources. */
  get waiting(): number {
    return this.count;
  }

  /** Drops everything waiting, handing each item to `dropped`. */
  clear(dropped?: (item: T) => void): void {
    if (dropped) for (const q of this.queues.values()) for (let i = q.head; i < q.items.length; i++) dropped(q.items[i] as T);
    this.queues.clear();
    this.count = 0;
  }

  /** One round: up to `turnBudget` items per source, sources in the order they first had items. */
  round(deliver: (item: T) => void): void {
    // Sources that arrive during this round (a delivery can send and so receive) wait for the next.
    for (const [source, q] of [...this.queues]) {
      const end = Math.min(q.items.length, q.head + this.limits.turnBudget);
      while (q.head < end) {
        const item = q.items[q.head] as T;
        q.items[q.head++] = undefined as T;
        this.count--;
        deliver(item);
      }
      if (q.head >= q.items.length) this.queues.delete(source);
      else if (q.head > 1024) {
        q.items = q.items.slice(q.head);
        q.head = 0;
      }
    }
  }
}
