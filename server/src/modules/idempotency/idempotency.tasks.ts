// The idempotency keys' background job: expired keys are deleted every hour.
import type { CronItem, TaskList } from 'graphile-worker';
import type { IdempotencyService } from './idempotency.service.js';

const EXPIRE_TASK = 'expire_idempotency_keys';

export function idempotencyTasks(idempotency: IdempotencyService): TaskList {
  return {
    [EXPIRE_TASK]: async (_payload, helpers) => {
      const deleted = await idempotency.expire();
      if (deleted > 0) helpers.logger.info(`deleted ${deleted} expired idempotency keys`);
    },
  };
}

export const idempotencyCron: CronItem[] = [{ task: EXPIRE_TASK, match: '0 * * * *', identifier: EXPIRE_TASK }];
