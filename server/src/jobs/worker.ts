// The background job runner (graphile-worker on the same PostgreSQL): migrations, the task list, start and stop.
import { Logger as WorkerLogger, parseCronItems, run, runMigrations, type CronItem, type Runner, type TaskList } from 'graphile-worker';
import type { Pool } from 'pg';
import type { Logger } from 'pino';

export const WORKER_SCHEMA = 'graphile_worker';

function workerLogger(logger: Logger) {
  return new WorkerLogger((scope) => (level, message, meta) => {
    const method = level === 'warning' ? 'warn' : level === 'error' ? 'error' : level === 'debug' ? 'debug' : 'info';
    logger[method]({ worker: scope, ...meta }, message);
  });
}

export async function migrateWorkerSchema(pool: Pool, logger: Logger): Promise<void> {
  await runMigrations({ pgPool: pool, schema: WORKER_SCHEMA, logger: workerLogger(logger) });
}

interface WorkerOptions {
  pool: Pool;
  logger: Logger;
  concurrency: number;
  taskList: TaskList;
  /** Recurring jobs; each names a task of `taskList`. */
  cronItems?: CronItem[];
}

/** Starts picking up jobs (LISTEN/NOTIFY, with polling as a fallback); stop() lets running jobs finish. */
export function startWorker(options: WorkerOptions): Promise<Runner> {
  return run({
    pgPool: options.pool,
    schema: WORKER_SCHEMA,
    concurrency: options.concurrency,
    taskList: options.taskList,
    // Always a list (possibly empty), so graphile-worker does not look for a `crontab` file in the working directory.
    parsedCronItems: parseCronItems(options.cronItems ?? []),
    // Completions and failures go through graphile-worker's batcher, which stop() flushes: without it a job's
    // completion is written after stop() resolves, races the pool closing, and the finished job is run again later.
    preset: { worker: { completeJobBatchDelay: 0, failJobBatchDelay: 0 } },
    noHandleSignals: true,
    pollInterval: 2000,
    logger: workerLogger(options.logger.child({ component: 'worker' })),
  });
}
