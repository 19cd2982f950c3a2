// Adds and removes graphile-worker jobs with SQL, inside the caller's transaction: a job exists iff its cause committed.
import { sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { WORKER_SCHEMA } from './worker.js';

interface JobOptions {
  /** Not before this time (default: now). */
  runAt?: Date | undefined;
  /** At most one pending job per key: adding again replaces the pending one (graphile-worker job keys). */
  jobKey?: string | undefined;
}

export async function enqueueJob(db: Db, task: string, payload: Record<string, unknown>, options: JobOptions = {}): Promise<void> {
  await db.execute(sql`
    SELECT ${sql.identifier(WORKER_SCHEMA)}.add_job(
      ${task}, ${JSON.stringify(payload)}::json,
      run_at => ${options.runAt?.toISOString() ?? null}::timestamptz, job_key => ${options.jobKey ?? null}::text)`);
}

/** Removes the pending job of this key; a running one is left to finish and not retried. */
export async function removeJob(db: Db, jobKey: string): Promise<void> {
  await db.execute(sql`SELECT ${sql.identifier(WORKER_SCHEMA)}.remove_job(${jobKey})`);
}
