// Group commit for registrations: the rows that arrive together are written by one multi-row INSERT, in one commit.
import type pg from 'pg';
import { insertRegistrations, type NewRegistration } from './subscriber.repository.js';

interface Pending {
  row: NewRegistration;
  resolve(inserted: boolean): void;
  reject(error: unknown): void;
}

export interface BatcherOptions {
  maxBatch: number;
}

export class SubscriberInsertBatcher {
  private queue: Pending[] = [];
  private scheduled = false;
  // One statement at a time: the rows that arrive while a batch is being written wait for the next, so batches
  // grow with the load instead of their number (docs/PERFORMANCE.md, Ingest).
  private writing = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly options: BatcherOptions = { maxBatch: 100 },
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
    if (this.scheduled || this.writing) return;
    this.scheduled = true;
    // After the I/O callbacks of this turn of the event loop: every request parsed meanwhile joins the batch.
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.scheduled = false;
    if (this.queue.length === 0) return;
    this.writing = true;
    void this.write(this.queue.splice(0, this.options.maxBatch)).finally(() => {
      this.writing = false;
      if (this.queue.length > 0) this.schedule();
    });
  }

  private async write(batch: Pending[]): Promise<void> {
    let inserted: Set<string>;
    try {
      inserted = await insertRegistrations(
        this.pool,
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
