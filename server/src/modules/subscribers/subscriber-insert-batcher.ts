// Group commit for registrations: the rows that arrive together are written by one multi-row INSERT, in one commit.
import type pg from 'pg';
import { GroupCommit, type GroupCommitOptions } from '../../shared/group-commit.js';
import { insertRegistrations, type NewRegistration, type OnRegistered } from './subscriber.repository.js';

export class SubscriberInsertBatcher {
  private readonly commits: GroupCommit<NewRegistration, boolean>;

  constructor(pool: pg.Pool, options: GroupCommitOptions = { maxBatch: 100 }, onRegistered?: OnRegistered) {
    this.commits = new GroupCommit(async (rows) => {
      const inserted = await insertRegistrations(pool, rows, onRegistered);
      return rows.map((row) => inserted.has(row.id));
    }, options);
  }

  /**
   * Resolves once the row is committed (true), or when its project already has the endpoint (false); rejects
   * only for this row's own failure.
   */
  insert(row: NewRegistration): Promise<boolean> {
    return this.commits.submit(row);
  }
}
