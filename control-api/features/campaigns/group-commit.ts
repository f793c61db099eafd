/**
 * Group commit: callers submit one item each and wait; items that arrive while a flush is in
 * progress are written together by the next flush (one transaction / multi-row statement for the
 * whole group). Each submitter is resolved only after its group's flush returned, i.e. after the
 * commit, so durability per item is the same as with one transaction per item, at a fraction of
 * the round trips and fsyncs. Under light load a group is a single item: no added delay.
 */
export interface GroupCommitOptions<T, R> {
  /** Writes the group; returns one result per item, in order. A throw fails every item of the group. */
  readonly flush: (items: readonly T[]) => Promise<readonly R[]>;
  /** Items per flush (keep multi-row statements under PostgreSQL's 65,535 parameters). */
  readonly maxBatch: number;
  /** Flushes in progress at once (each holds one pooled connection). */
  readonly maxConcurrent: number;
}

interface Pending<T, R> {
  readonly item: T;
  readonly resolve: (result: R) => void;
  readonly reject: (error: unknown) => void;
}

export class GroupCommit<T, R> {
  private queue: Array<Pending<T, R>> = [];
  private active = 0;
  private idleWaiters: Array<() => void> = [];

  constructor(private readonly options: GroupCommitOptions<T, R>) {}

  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.pump();
    });
  }

  /** Items waiting or being written. */
  get pending(): number {
    return this.queue.length + this.active;
  }

  /** Resolves once nothing is queued or in flight. */
  async drained(): Promise<void> {
    while (this.pending > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  private pump(): void {
    while (this.active < this.options.maxConcurrent && this.queue.length > 0) {
      const group = this.queue.splice(0, this.options.maxBatch);
      this.active += 1;
      void this.run(group);
    }
  }

  private async run(group: Array<Pending<T, R>>): Promise<void> {
    try {
      const results = await this.options.flush(group.map((p) => p.item));
      if (results.length !== group.length) throw new Error(`group commit: ${results.length} results for ${group.length} items`);
      group.forEach((p, i) => p.resolve(results[i]!));
    } catch (error) {
      for (const p of group) p.reject(error);
    } finally {
      this.active -= 1;
      this.pump();
      if (this.pending === 0) for (const wake of this.idleWaiters.splice(0)) wake();
    }
  }
}
