// Group commit for registrations: the rows that arrive together are written by one multi-row INSERT, in one commit.
import type { Db } from '../../db/database.js';
import { insertRegistrations, type NewRegistration } from './subscriber.repository.js';

interface Pending {
  row: NewRegistration;
  resolve(inserted: boolean): void;
  reject(error: unknown): void;
}

export interface BatcherOptions {
  maxBatch: number;
  /**
   * Statements in flight at once. One: the rows that arrive while a batch is being written wait for the next, so
   * batches grow with the load instead of their number (docs/PERFORMANCE.md, Ingest).
   */
  maxInFlight: number;
}

export class SubscriberInsertBatcher {
  private queue: Pending[] = [];
  private scheduled = false;
  private inFlight = 0;

  constructor(
    private readonly db: Db,
    private readonly options: BatcherOptions = { maxBatch: 100, maxInFlight: 1 },
  ) {}

  /**
   * Resolves once the row is committed (true), or when its project already has the endpoint (false); rejects
   * only for this row's own failure.
   */
  insert(row: NewRegistration): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.queue.push({ row, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.options.maxInFlight) return;
    this.scheduled = true;
    // After the I/O callbacks of this turn of the event loop: every request parsed meanwhile joins the batch.
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.scheduled = false;
    while (this.queue.length > 0 && this.inFlight < this.options.maxInFlight) {
      this.inFlight++;
      void this.write(this.queue.splice(0, this.options.maxBatch)).finally(() => {
        this.inFlight--;
        if (this.queue.length > 0) this.schedule();
      });
    }
  }

  private async write(batch: Pending[]): Promise<void> {
    let inserted: Set<string>;
    try {
      inserted = await insertRegistrations(
        this.db,
        batch.map((pending) => pending.row),
      );
    } catch (error) {
      if (batch.length === 1) return batch[0]!.reject(error);
      // The statement is all or nothing: retry each row alone, so only a bad row fails.
      await Promise.all(batch.map((pending) => this.write([pending])));
      return;
    }
    for (const pending of batch) pending.resolve(inserted.has(pending.row.id));
  }
}
