// What a test app runs beside its API in production: graphile-worker's tasks and the delivery engine's lanes.
import { createTaskList } from '../src/app/task-list.js';
import { startWorker } from '../src/jobs/worker.js';
import { createLogger } from '../src/logger.js';
import type { TestApp } from './harness.js';

export interface Background {
  stop(): Promise<void>;
}

/** Starts the worker (two jobs at a time) and the engine's lanes; `stop` stops both, the worker first. */
export async function startBackground(t: TestApp): Promise<Background> {
  const runner = await startWorker({ pool: t.database.pool, logger: createLogger('silent'), concurrency: 2, taskList: createTaskList(t.services) });
  t.services.delivery.start();
  return {
    async stop() {
      await runner.stop();
      await t.services.delivery.stop();
    },
  };
}
