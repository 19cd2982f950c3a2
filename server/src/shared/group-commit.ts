// Group commit: what callers submit together is written by one call (one statement or transaction, one commit), and
// each caller is answered with its own result.

export interface GroupCommitOptions {
  /** Items written by one call at most; the rest wait for the next. */
  maxBatch: number;
}

interface Pending<T, R> {
  item: T;
  resolve(result: R): void;
  reject(error: unknown): void;
}

/**
 * `write` takes the items of one group and answers one result per item, in order. One write at a time: the items that
 * arrive while a group is written wait for the next, so groups grow with the load instead of their number
 * (docs/PERFORMANCE.md, "Ingest"). A failed group is written again one item at a time, so only a bad item fails.
 */
export class GroupCommit<T, R> {
  private queue: Pending<T, R>[] = [];
  private scheduled = false;
  private writing = false;

  constructor(
    private readonly write: (items: T[]) => Promise<R[]>,
    private readonly options: GroupCommitOptions,
  ) {}

  /** Resolves with the item's result once its group is written; rejects only for this item's own failure. */
  submit(item: T): Promise<R> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.writing) return;
    this.scheduled = true;
    // After the I/O callbacks of this turn of the event loop: every request handled meanwhile joins the group.
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.scheduled = false;
    if (this.queue.length === 0) return;
    this.writing = true;
    void this.run(this.queue.splice(0, this.options.maxBatch)).finally(() => {
      this.writing = false;
      if (this.queue.length > 0) this.schedule();
    });
  }

  private async run(group: Pending<T, R>[]): Promise<void> {
    let results: R[];
    try {
      results = await this.write(group.map((pending) => pending.item));
    } catch (error) {
      if (group.length === 1) return group[0]!.reject(error);
      await Promise.all(group.map((pending) => this.run([pending])));
      return;
    }
    group.forEach((pending, i) => pending.resolve(results[i]!));
  }
}
